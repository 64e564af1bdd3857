"""Node containers: systemd as PID 1 on a podman network, reached over SSH with a key made for this lab.

Compute nodes get CAP_SYS_ADMIN and a private cgroup namespace, so that a boot unit of the image can make their
own cgroup controllers writable for SLURM's cgroup plugins, and CAP_SYS_NICE, without which task/affinity cannot
pin a non-root job's tasks (slurmd then drains the node); they are not privileged (no host devices, no
kernel modules, no clock). Every container and the network carry the lab's label, so `down` finds them all.
"""

from __future__ import annotations

import ipaddress
import shlex
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_text
from clusterforge.lab import podman
from clusterforge.lab.paths import LABEL, LabPaths
from clusterforge.lab.repo import MOUNT
from clusterforge.lab.state import Node
from clusterforge.model import Cluster
from clusterforge.render.slurm_conf import STATE_SAVE_LOCATION

CGROUP_WRITERS = ("slurm_compute",)
STATE_HOLDER = "slurm_controller"
DATABASE_HOLDER = "pool_db"  # the accounting host of `lab up --ha` (lab/render.py DBD_POOL)
DATABASE_DIR = "/var/lib/mysql"
# The hosts every other node waits for: the controllers (a node configuring itself registers only once slurmctld
# runs) and the accounting host. Their containers start first (lab/selfboot.py) and get WAITED_ON_CPU_SHARES, eight
# times podman's default share (1024) of the host's CPU: every node of a lab shares this host's cores, and the
# controller's boot phase, which `lab up` waits for, is the critical path (a cached 3-node `lab up` 38-41 s with
# it, 45-51 s without; benchmarks/README.md). On servers each node has cores of its own.
WAITED_ON = (STATE_HOLDER, DATABASE_HOLDER)
WAITED_ON_CPU_SHARES = 8192
# aardvark-dns, which answers the lab's node names, drops a query while it reloads for a container joining the
# network. At the resolver's default (5 s per server, the host's upstream server second) one dropped lookup cost a
# node 10 s, and sudo's lookups at the start of the controller's boot phase 37-42 s (one `lab up` in four here); a
# second try after 1 s finds aardvark back.
RESOLVER = ("--dns-option", "timeout:1")


FIRST_HOST = 10  # node addresses start at .10 of the lab network (the gateway is .1)


@dataclass(frozen=True)
class NodeSpec:
    name: str
    groups: tuple[str, ...]
    ip: str


def ensure_ssh_key(paths: LabPaths) -> None:
    if paths.ssh_key.exists():
        return
    paths.make()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"clusterforge-lab-{paths.name}",
                    "-f", str(paths.ssh_key)], check=True)


def ensure_network(paths: LabPaths, subnet: ipaddress.IPv4Network | None = None) -> ipaddress.IPv4Network:
    """The lab's network (podman picks a free subnet, unless the blueprint's provisioning network names one, as
    the metal lab's does); its subnet."""
    if not podman.exists("network", paths.network):
        chosen = ["--subnet", str(subnet), "--gateway", str(subnet.network_address + 1)] if subnet else []
        podman.run(["network", "create", "--label", f"{LABEL}={paths.name}", *chosen, paths.network])
    subnets = podman.inspect("network", paths.network)["subnets"]
    return ipaddress.IPv4Network(subnets[0]["subnet"])


def specs_for(hosts: dict[str, tuple[str, ...]], subnet: ipaddress.IPv4Network,
              planned: Mapping[str, str] | None = None) -> list[NodeSpec]:
    """One spec per inventory host with a fixed address, so a restarted container keeps it (as a server would):
    the address plan's where the blueprint has one (`planned`), else the lab network's from .10 on."""
    capacity = subnet.num_addresses - FIRST_HOST - 1
    if len(hosts) > capacity:
        raise ClusterforgeError(Problem(f"{len(hosts)} nodes do not fit in {subnet}", path="--nodes",
                                        hint=f"at most {capacity}"))
    return [NodeSpec(name, groups, (planned or {}).get(name) or str(subnet.network_address + FIRST_HOST + index))
            for index, (name, groups) in enumerate(hosts.items())]


def planned_network(cluster: Cluster, blueprint: Path) -> ipaddress.IPv4Network:
    """The provisioning network of the blueprint's address plan (the metal lab's podman network)."""
    networks = cluster.site.networks if cluster.site else None
    if networks is None:
        raise ClusterforgeError(Problem("the metal lab's blueprint has no site.networks.provisioning", str(blueprint),
                                        hint="the addresses its servers boot with come from it (lab/data/metal.yaml)"))
    return ipaddress.IPv4Network(networks.provisioning.cidr)


def planned_addresses(rendered: Path) -> dict[str, str]:
    """Each node's address from the render's address plan (provisioning/addresses.txt: `name address` lines)."""
    path = rendered / "provisioning" / "addresses.txt"
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 2 and not line.startswith("#"):
            found[fields[0]] = fields[1]
    return found


def state_volume(paths: LabPaths, spec: NodeSpec) -> list[str]:
    """The controller's StateSaveLocation and the accounting database on volumes of their own, as on a server's
    persistent disk: jobs, node states and accounting survive the container being restarted or replaced (the
    fault drill in docs/lab.md)."""
    mounts = []
    if STATE_HOLDER in spec.groups:
        mounts.append(("state", STATE_SAVE_LOCATION))
    if STATE_HOLDER in spec.groups or DATABASE_HOLDER in spec.groups:
        # the accounting database too: slurmctld refuses to start when its saved state names a cluster ID the
        # database no longer knows (a re-imaged controller with an empty database)
        mounts.append(("db", DATABASE_DIR))
    options = []
    for suffix, path in mounts:
        volume = f"{paths.container(spec.name)}-{suffix}"
        if not podman.exists("volume", volume):
            podman.run(["volume", "create", "--label", f"{LABEL}={paths.name}", volume])
        options += ["--volume", f"{volume}:{path}"]
    return options


SHARED_MOUNT = "/shared"


def shared_volume(paths: LabPaths) -> list[str]:
    """One volume every node mounts at /shared, standing in for the NFS or Lustre file system a cluster shares:
    the HA controllers' StateSaveLocation, job checkpoints, software."""
    volume = f"{paths.name}-shared"
    if not podman.exists("volume", volume):
        podman.run(["volume", "create", "--label", f"{LABEL}={paths.name}", volume])
    return ["--volume", f"{volume}:{SHARED_MOUNT}"]


def waited_on(spec: NodeSpec) -> bool:
    """Whether every other node waits for this one (a controller, the accounting host)."""
    return any(group in WAITED_ON for group in spec.groups)


def cpu_share(spec: NodeSpec) -> list[str]:
    """podman's option for a node's share of the host's CPU: a larger one for the hosts the others wait for."""
    return ["--cpu-shares", str(WAITED_ON_CPU_SHARES)] if waited_on(spec) else []


def start(paths: LabPaths, specs: Sequence[NodeSpec], image: str, repo: str, keep_state: bool = True,
          given: Callable[[NodeSpec], list[str]] | None = None, restart: bool = True,
          labels: Sequence[str] = ()) -> None:
    """Start one container per node (about 0.2 s each); systemd boots in the background. Without keep_state
    (the bake node, committed as an image) nothing is on a volume.

    A node restarts when its systemd exits, as a server comes back after `reboot` (SLURM's RebootProgram, run by
    `scontrol reboot`): /run starts empty again and every service starts afresh. `podman stop` (`lab stop`, the
    node-loss drill) keeps it stopped. `given`: the options of what a node configuring itself is given
    (lab/selfboot.py). Without `restart` (a node SLURM powers up, lab/power_agent.py) a container that dies stays
    dead, as a failed instance does, until reconcile replaces it."""
    pubkey = paths.ssh_key.with_suffix(".pub")
    for spec in specs:
        cgroups = any(g in CGROUP_WRITERS for g in spec.groups)
        podman.run([
            "run", "--detach", "--name", paths.container(spec.name), "--hostname", spec.name,
            "--network", paths.network, "--ip", spec.ip, "--network-alias", spec.name, "--no-hosts",
            "--systemd=always", *(["--restart=always"] if keep_state and restart else []),
            "--label", f"{LABEL}={paths.name}", "--label", f"{LABEL}.node={spec.name}",
            *(arg for label in labels for arg in ("--label", label)),
            *(["--cap-add", "SYS_ADMIN", "--cap-add", "SYS_NICE", "--cgroupns=private"] if cgroups else []),
            "--volume", f"{repo}:{MOUNT}:ro", "--volume", f"{pubkey}:/root/.ssh/authorized_keys:ro",
            *cpu_share(spec), *RESOLVER, *([*state_volume(paths, spec), *shared_volume(paths)] if keep_state else []),
            *(given(spec) if given is not None else []), image,
        ])


def write_ssh_config(paths: LabPaths, nodes: Sequence[Node]) -> None:
    """An ssh_config naming every node: `ssh -F <lab>/ssh_config <node>` works for people too.

    Its key exchange is curve25519-sha256 alone. OpenSSH's default first choice, the post-quantum hybrid
    sntrup761x25519, made each new connection cost about 190 ms of CPU (130 ms of it the client's key generation),
    against about 70 ms (benchmarks/lab_ssh.py): `lab exec`, the lab's tests and Ansible open one for each command
    they run, and the lab's traffic never leaves this host's bridge."""
    blocks = [f"Host {n.name}\n  HostName {n.ip}\n" for n in nodes]
    common = (f"Host *\n  User root\n  IdentityFile {paths.ssh_key}\n  IdentitiesOnly yes\n"
              "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
              "  KexAlgorithms curve25519-sha256\n"
              f"  ControlPath {paths.root}/cp-%n\n")
    write_text(paths.ssh_config, "".join(blocks) + common)


def wait_booted(paths: LabPaths, names: Sequence[str], timeout: float = 90) -> None:
    """Wait until every node accepts this lab's key over SSH and systemd has finished booting it.

    Everything after boot goes over SSH, as on servers: `podman exec` into a node with a private cgroup
    namespace stops working once its systemd has moved into the host's name=systemd tree (docs/lab.md).
    """
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            proc = ssh(paths, name, ["systemctl", "is-system-running", "--wait"], timeout=timeout, control=False)
            if proc.stdout.strip() in ("running", "degraded"):
                break
            if time.monotonic() > deadline:
                raise ClusterforgeError(Problem(
                    f"{name} did not boot within {timeout:.0f} s: {(proc.stdout + proc.stderr).strip()[-200:]}",
                    str(paths.ssh_config), hint=f"podman logs {paths.container(name)}"))
            time.sleep(0.3)


def ssh(paths: LabPaths, node: str, command: Sequence[str], timeout: float | None = 30,
        control: bool = True) -> subprocess.CompletedProcess[str]:
    options = [] if control else ["-o", "ControlPath=none"]
    return subprocess.run(["ssh", "-F", str(paths.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                           *options, node, shlex.join(command)], capture_output=True, text=True, timeout=timeout,
                          check=False)


def ssh_popen(paths: LabPaths, node: str, command: Sequence[str]) -> subprocess.Popen[str]:
    """A command on a node that runs while this process watches something else (the metal lab's first job)."""
    return subprocess.Popen(["ssh", "-F", str(paths.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                             "-o", "ControlPath=none", node, shlex.join(command)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def close_ssh(paths: LabPaths, nodes: Sequence[str]) -> None:
    """Stop the SSH master connections Ansible left open to these nodes."""
    if not paths.ssh_config.exists():
        return
    for node in nodes:
        subprocess.run(["ssh", "-F", str(paths.ssh_config), "-O", "exit", node], capture_output=True, timeout=10,
                       check=False)
