"""The metal lab's servers' IPMI service: OpenStack's VirtualBMC, one IPMI 2.0 BMC per virtual server on its own
UDP port, powering the libvirt domain as the Redfish emulator (lab/metal/bmcs.py) does. Ironic's CI drives its
virtual bare metal through both; a site's BMCs often answer both too, and `clusterforge power` speaks both
(clusterforge/bmc/protocols.py).

The lab writes VirtualBMC's own files rather than calling its `vbmc add` command: a domain's `config` file (0600,
with `active = True`) is what `vbmc add` and `vbmc start` would write, and the password never appears on a command
line. `vbmcd --foreground` reads its settings from VIRTUALBMC_CONFIG, finds the domains' files and starts one
IPMI server per active domain (its periodic check, every 3 s), each listening on the lab bridge's host address.

IPMI's logins are shorter than Redfish's (a user name of at most 16 bytes, a password of at most 20), so the IPMI
BMCs get a login of their own, beside the Redfish one, written for the controllers alone (0600). The document an
operator or a test gives `clusterforge power` is `power/bmc/ipmi/bmcs.yaml`, with `protocol: ipmi`.
"""

from __future__ import annotations

import configparser
import errno
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_bytes, write_text
from clusterforge.lab.bmc_service import USER, BmcFiles, BmcLogin, free_port
from clusterforge.lab.metal import bmcs, virt

READY_S = 60.0
PASSWORD_BYTES = 15  # token_urlsafe: 20 characters, IPMI 2.0's longest password


@dataclass(frozen=True)
class IpmiFiles(BmcLogin):
    """Where the lab's VirtualBMC keeps its files: `power/bmc/ipmi/` beside the Redfish emulator's."""

    @classmethod
    def of(cls, files: BmcFiles) -> IpmiFiles:
        return cls(files.folder / "ipmi")

    @property
    def settings(self) -> Path:
        return self.folder / "virtualbmc.conf"

    @property
    def domains(self) -> Path:
        return self.folder / "domains"

    @property
    def log(self) -> Path:
        return self.folder / "vbmcd.log"

    @property
    def pid(self) -> Path:
        return self.folder / "vbmcd.pid"


def free_udp_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def listening(address: str, port: int) -> bool:
    """Whether something holds UDP `address:port` (a bind there is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind((address, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _ini(section: str, values: dict[str, str]) -> str:
    parser = configparser.ConfigParser(interpolation=None)
    parser[section] = values
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


def domain_config(server: virt.Server, address: str, port: int, password: str) -> str:
    """What `vbmc add` and `vbmc start` write for a domain (VirtualBMC's manager reads these options)."""
    return _ini("VirtualBMC", {"username": USER, "password": password, "address": address, "port": str(port),
                               "domain_name": server.domain, "libvirt_uri": virt.URI, "active": "True"})


def ports_for(files: BmcFiles, servers: Sequence[virt.Server]) -> tuple[str, dict[str, int]]:
    """Where each server's IPMI BMC listens: the Redfish emulator's address (the bridge's host side) and a free UDP
    port per server."""
    address = str(json.loads(files.settings.read_text(encoding="utf-8"))["address"])
    return address, {server.node: free_udp_port(address) for server in servers}


def write(files: BmcFiles, servers: Sequence[virt.Server], address: str, ports: dict[str, int]) -> IpmiFiles:
    """VirtualBMC's settings, a domain file per server, the login and the BMC document; the files."""
    ipmi = IpmiFiles.of(files)
    ipmi.domains.mkdir(parents=True, exist_ok=True, mode=0o700)
    password = secrets.token_urlsafe(PASSWORD_BYTES)
    for server in servers:
        folder = ipmi.domains / server.domain
        folder.mkdir(exist_ok=True, mode=0o700)
        write_bytes(folder / "config", domain_config(server, address, ports[server.node], password).encode(),
                    mode=0o600)
    write_text(ipmi.settings, _ini("default", {"config_dir": str(ipmi.domains), "pid_file": str(ipmi.pid),
                                               "server_port": str(free_port())})
               + _ini("log", {"logfile": str(ipmi.log), "debug": "false"}))
    write_bytes(ipmi.credentials, yaml.safe_dump({"username": USER, "password": password}).encode(), mode=0o600)
    document = {"defaults": {"protocol": "ipmi"},
                "bmcs": {node: {"url": f"ipmi://{address}:{port}"} for node, port in ports.items()}}
    write_text(ipmi.document, "# the lab's IPMI BMCs (VirtualBMC), written by clusterforge lab\n"
               + yaml.safe_dump(document, sort_keys=True))
    return ipmi


def program() -> Path:
    """`vbmcd`, from the BMC emulators' environment (lab/metal/bmcs.environment makes it)."""
    return bmcs.environment().with_name("vbmcd")


def start(files: BmcFiles, servers: Sequence[virt.Server]) -> IpmiFiles:
    """VirtualBMC for `servers`, once every server's IPMI port is bound; its files."""
    stop(files)
    address, ports = ports_for(files, servers)
    ipmi = write(files, servers, address, ports)
    with open(ipmi.log, "ab") as log:
        proc = subprocess.Popen([str(program()), "--foreground"], stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                env={**os.environ, "VIRTUALBMC_CONFIG": str(ipmi.settings)},
                                start_new_session=True)
    deadline = time.monotonic() + READY_S
    while not all(listening(address, port) for port in ports.values()):
        if proc.poll() is not None or time.monotonic() > deadline:
            said = ipmi.log.read_text(encoding="utf-8", errors="replace")[-600:] if ipmi.log.is_file() else ""
            stop(files)
            why = f"exited {proc.returncode}" if proc.returncode is not None else f"not within {READY_S:.0f} s"
            raise ClusterforgeError(Problem(f"VirtualBMC's IPMI servers did not start ({why}): {said}",
                                            str(ipmi.log)))
        time.sleep(0.5)
    return ipmi


def stop(files: BmcFiles) -> bool:
    """Stop VirtualBMC (vbmcd and the IPMI server it runs per domain: one process group, its own session);
    whether one ran. The pid file's process is checked to be vbmcd first: a pid left by a lab long gone may
    since name another program."""
    pid = _pid(IpmiFiles.of(files).pid)
    if pid is None or not _is_vbmcd(pid):
        return False
    try:
        os.killpg(os.getpgid(pid), signal.SIGTERM)
    except ProcessLookupError:
        return False
    return True


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _is_vbmcd(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(Path(arg.decode(errors="replace")).name == "vbmcd" for arg in argv[:2])
