"""Node containers: systemd as PID 1 on a podman network, reached over SSH with a key made for this lab.

Compute nodes run privileged with a private cgroup namespace (SLURM's cgroup plugins need writable cgroups);
the others run unprivileged. Every container and the network carry the lab's label, so `down` finds them all.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from clusterforge.atomic import write_text
from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.lab import podman
from clusterforge.lab.paths import LABEL, LabPaths
from clusterforge.lab.repo import MOUNT
from clusterforge.lab.state import Node

PRIVILEGED_GROUPS = ("slurm_compute",)


@dataclass(frozen=True)
class NodeSpec:
    name: str
    groups: tuple[str, ...]


def ensure_ssh_key(paths: LabPaths) -> None:
    if paths.ssh_key.exists():
        return
    paths.root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"clusterforge-lab-{paths.name}",
                    "-f", str(paths.ssh_key)], check=True)


def ensure_network(paths: LabPaths) -> None:
    if not podman.exists("network", paths.network):
        podman.run(["network", "create", "--label", f"{LABEL}={paths.name}", paths.network])


def start(paths: LabPaths, specs: Sequence[NodeSpec], image: str, repo: str) -> None:
    """Start one container per node (about 0.2 s each); systemd boots in the background."""
    pubkey = paths.ssh_key.with_suffix(".pub")
    for spec in specs:
        privileged = any(g in PRIVILEGED_GROUPS for g in spec.groups)
        podman.run([
            "run", "--detach", "--name", paths.container(spec.name), "--hostname", spec.name,
            "--network", paths.network, "--network-alias", spec.name, "--no-hosts", "--systemd=always",
            "--label", f"{LABEL}={paths.name}", "--label", f"{LABEL}.node={spec.name}",
            *(["--privileged", "--cgroupns=private"] if privileged else []),
            "--volume", f"{repo}:{MOUNT}:ro", "--volume", f"{pubkey}:/root/.ssh/authorized_keys:ro",
            image,
        ])


def wait_booted(paths: LabPaths, specs: Sequence[NodeSpec], timeout: float = 60) -> None:
    """Wait until systemd in every node has finished booting and sshd listens."""
    deadline = time.monotonic() + timeout
    pending = [paths.container(s.name) for s in specs]
    while pending:
        proc = podman.exec_(pending[0], ["systemctl", "is-system-running"], check=False, timeout=10)
        state = proc.stdout.strip()
        if state in ("running", "degraded") and podman.exec_(
                pending[0], ["systemctl", "is-active", "--quiet", "ssh"], check=False, timeout=10).returncode == 0:
            pending.pop(0)
            continue
        if time.monotonic() > deadline:
            raise ClusterforgeError(Problem(f"{pending[0]} did not boot within {timeout:.0f} s (systemd: {state})",
                                            hint=f"podman logs {pending[0]}"))
        time.sleep(0.2)


def addresses(paths: LabPaths, specs: Sequence[NodeSpec]) -> list[Node]:
    out = []
    for spec in specs:
        container = paths.container(spec.name)
        networks = podman.inspect("container", container)["NetworkSettings"]["Networks"]
        out.append(Node(spec.name, container, networks[paths.network]["IPAddress"], spec.groups))
    return out


def write_ssh_config(paths: LabPaths, nodes: Sequence[Node]) -> None:
    """An ssh_config naming every node: `ssh -F <lab>/ssh_config <node>` works for people too."""
    blocks = [f"Host {n.name}\n  HostName {n.ip}\n" for n in nodes]
    common = (f"Host *\n  User root\n  IdentityFile {paths.ssh_key}\n  IdentitiesOnly yes\n"
              "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
              f"  ControlPath {paths.root}/cp-%C\n")
    write_text(paths.ssh_config, "".join(blocks) + common)


def ssh(paths: LabPaths, node: str, command: Sequence[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ssh", "-F", str(paths.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                           node, *command], capture_output=True, text=True, timeout=timeout, check=False)


def close_ssh(paths: LabPaths, nodes: Sequence[str]) -> None:
    """Stop the SSH master connections Ansible left open to these nodes."""
    if not paths.ssh_config.exists():
        return
    for node in nodes:
        subprocess.run(["ssh", "-F", str(paths.ssh_config), "-O", "exit", node], capture_output=True, timeout=10,
                       check=False)
