"""Host prerequisites: podman (rootful, runc, netavark), mmdebstrap, and the containers.conf the lab needs.

Every missing piece becomes one Problem naming what to install or configure; `scripts/lab-host-setup` does
all of it. Nothing here changes the host.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem

SETUP = "scripts/lab-host-setup"
CONF_FILES = (Path("/usr/share/containers/containers.conf"), Path("/etc/containers/containers.conf"))
PODMAN_DEFAULT_NOFILE = 1048576
TOOLS = ("podman", "runc", "mmdebstrap", "iptables", "ssh", "ssh-keygen")
CONF = "/etc/containers/containers.conf"
INOTIFY = Path("/proc/sys/fs/inotify/max_user_instances")
SYSCTL_FILE = "/etc/sysctl.d/60-clusterforge-lab.conf"
# Each node's systemd and its services hold about six inotify instances (measured: 159 for 25 nodes), all
# counted against root's one limit, whose kernel default is 128; a node that gets none exits at boot (255).
INOTIFY_PER_NODE = 8
INOTIFY_SPARE = 64  # the host's own


@dataclass(frozen=True)
class HostFacts:
    """What the checks look at, gathered once (tests build this directly)."""

    euid: int
    tools: dict[str, bool]
    podman_info: dict[str, object] | None
    ulimits: list[str]
    hard_nofile: int


def gather(which: Callable[[str], str | None] = shutil.which) -> HostFacts:
    tools = {name: which(name) is not None for name in TOOLS}
    info = None
    if tools["podman"]:
        proc = subprocess.run(["podman", "info", "--format", "json"], capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            info = json.loads(proc.stdout)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return HostFacts(os.geteuid(), tools, info, configured_ulimits(),
                     PODMAN_DEFAULT_NOFILE if hard == resource.RLIM_INFINITY else hard)


def configured_ulimits(files: tuple[Path, ...] = CONF_FILES) -> list[str]:
    """`default_ulimits` of the last containers.conf that sets it."""
    found: list[str] = []
    for path in files:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        value = data.get("containers", {}).get("default_ulimits")
        if isinstance(value, list):
            found = [str(v) for v in value]
    return found


def problems(facts: HostFacts, need_mmdebstrap: bool) -> list[Problem]:
    """Everything that stops the lab on this host, each with the fix."""
    out: list[Problem] = []
    fix = f"run {SETUP}"
    if facts.euid != 0:
        out.append(Problem("the lab needs rootful podman (privileged nodes with private cgroup namespaces)",
                           "host", hint="run as root or with sudo"))
    missing = [t for t in ("podman", "runc", "iptables", "ssh", "ssh-keygen") if not facts.tools.get(t)]
    if need_mmdebstrap and not facts.tools.get("mmdebstrap"):
        missing.append("mmdebstrap")
    if missing:
        packages = " ".join("openssh-client" if m.startswith("ssh") else m for m in dict.fromkeys(missing))
        out.append(Problem(f"missing {', '.join(missing)}", "host",
                           hint=f"apt-get install {' '.join(dict.fromkeys(packages.split()))} (or {fix})"))
    if facts.tools.get("podman") and facts.podman_info is None:
        out.append(Problem("`podman info` failed", "host", hint=f"check the podman installation ({fix})"))
    if facts.podman_info is not None:
        host = facts.podman_info.get("host", {})
        assert isinstance(host, dict)
        runtime = host.get("ociRuntime", {}).get("name")
        if runtime != "runc":
            out.append(Problem(f"podman uses the {runtime} runtime; the lab needs runc", CONF,
                               hint=f'set [engine] runtime = "runc" ({fix}); crun 1.8 fails on cgroup-v1 hybrid hosts'))
        backend = host.get("networkBackend")
        if backend != "netavark":
            out.append(Problem(f"podman's network backend is {backend}; the lab needs netavark", CONF,
                               hint='apt-get install netavark aardvark-dns and set [network] network_backend = '
                                    f'"netavark" ({fix})'))
    if facts.hard_nofile < PODMAN_DEFAULT_NOFILE and not any(u.startswith("nofile=") for u in facts.ulimits):
        out.append(Problem(f"the hard open-files limit is {facts.hard_nofile}, below podman's default "
                           f"{PODMAN_DEFAULT_NOFILE}, and containers.conf sets no default_ulimits",
                           CONF, hint=f'set [containers] default_ulimits = ["nofile={facts.hard_nofile}:'
                                      f'{facts.hard_nofile}", "nproc=32768:32768"] ({fix})'))
    return out


def inotify_problem(nodes: int, path: Path = INOTIFY) -> Problem | None:
    """A problem when `nodes` lab nodes would need more inotify instances than the kernel gives root."""
    try:
        limit = int(path.read_text())
    except (OSError, ValueError):
        return None
    need = nodes * INOTIFY_PER_NODE + INOTIFY_SPARE
    if limit >= need:
        return None
    return Problem(f"{nodes} nodes need about {need} inotify instances (systemd in each node holds several); "
                   f"this host allows {limit}, so some nodes would exit at boot", str(path),
                   hint=f"sysctl -w fs.inotify.max_user_instances={max(need, 8192)} (kept across reboots by {SETUP})")


def require_inotify(nodes: int) -> None:
    found = inotify_problem(nodes)
    if found:
        raise ClusterforgeError(found)


def require(need_mmdebstrap: bool, facts: HostFacts | None = None) -> None:
    """Raise with every problem found, or return when the host can run the lab."""
    found = problems(facts or gather(), need_mmdebstrap)
    if found:
        raise ClusterforgeError(found)
