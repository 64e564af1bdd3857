"""The lab's BMCs: OpenStack's sushy-tools Redfish emulator (its fake driver), one system per node of the lab's
power-saved pools, in front of their containers.

On a real cluster slurmctld's programs power servers through their BMCs (target onprem's provider,
clusterforge/targets/onprem/powersave.py); in the lab they run exactly that code against this emulator. The fake
driver keeps each system's power state and, on every change, PUTs the system to an external URL: the lab's power
agent (lab/power_agent.py), which starts a node's container when its system is On and removes it when Off, as
power does a server's. Nothing else starts those containers.

The emulator listens on the lab network's gateway, the host's side of the lab's bridge, so only the lab's
containers reach it, behind basic auth with a password made per lab. The login is written for the controllers
alone (0600); the BMC document and the login are in this lab's `power/bmc/` folder, which the controllers see at
the same path, so the slurm role installs them from there whether it runs over SSH or on the node itself.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_bytes, write_text
from clusterforge.lab.nodes import NodeSpec
from clusterforge.lab.paths import LabPaths

USER = "clusterforge"
READY_S = 60.0
_NAMESPACE = uuid.UUID("5b0c7a52-3d4e-4f0a-9a57-1b2f3c4d5e6f")  # system ids: stable per lab and node


@dataclass(frozen=True)
class BmcLogin:
    """A folder of a lab's BMC document and its login: what `clusterforge power --bmcs --credentials` is given."""

    folder: Path

    @property
    def document(self) -> Path:
        return self.folder / "bmcs.yaml"

    @property
    def credentials(self) -> Path:
        return self.folder / "credentials.yaml"


@dataclass(frozen=True)
class BmcFiles(BmcLogin):
    """Where the lab's BMC service keeps its files (the launched folder's `bmc/`)."""

    @classmethod
    def of(cls, paths: LabPaths) -> BmcFiles:
        return cls(paths.root / "power" / "bmc")

    @property
    def settings(self) -> Path:
        return self.folder / "service.json"

    @property
    def emulator_config(self) -> Path:
        return self.folder / "emulator.py"

    @property
    def htpasswd(self) -> Path:
        return self.folder / "htpasswd"

    @property
    def log(self) -> Path:
        return self.folder / "emulator.log"

    @property
    def state(self) -> Path:
        return self.folder / "state"


def system_id(lab: str, node: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{lab}/{node}"))


def gateway(subnet: ipaddress.IPv4Network) -> str:
    """The host's address on the lab network (podman gives its bridge the subnet's first address)."""
    return str(subnet.network_address + 1)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def prepare(paths: LabPaths, launched: Sequence[NodeSpec], subnet: ipaddress.IPv4Network,
            emulator: Path) -> BmcFiles:
    """The BMC document and login for the lab's power-saved nodes, and the service's settings (address, port,
    systems), written before the nodes start; the agent starts the emulator (`emulator`, the program) from them.
    The login's digest is made by the emulator's own environment (`login_digest`)."""
    files = BmcFiles.of(paths)
    files.folder.mkdir(parents=True, exist_ok=True)
    address, port = gateway(subnet), free_port()
    url = f"http://{address}:{port}"
    ids = {spec.name: system_id(paths.name, spec.name) for spec in launched}
    # plain HTTP, named: the lab's own bridge on this host, never a network
    document = {"defaults": {"verify_tls": False, "allow_plain_http": True},
                "bmcs": {node: {"url": url, "system": ident} for node, ident in ids.items()}}
    write_text(files.document, "# the lab's BMCs (sushy-tools emulator), written by clusterforge lab\n"
               + yaml.safe_dump(document, sort_keys=True))
    password = secrets.token_urlsafe(24)
    write_bytes(files.credentials, yaml.safe_dump({"username": USER, "password": password}).encode(), mode=0o600)
    digest = login_digest(emulator, password)
    write_bytes(files.htpasswd, f"{USER}:{digest}\n".encode(), mode=0o600)
    write_text(files.settings, json.dumps({"address": address, "port": port, "systems": ids}, indent=2) + "\n")
    return files


def emulator_config(listen: str, port: int, systems: dict[str, str], auth_file: Path, state_dir: Path,
                    notify_url: str | None = None, nics: Mapping[str, Sequence[str]] | None = None) -> str:
    """The emulator's configuration (a Python file it executes: every value written as a literal here): the fake
    driver with `systems` (node -> id), all Off, its own state folder (the default is shared by every emulator on
    the machine), with `notify_url`, a PUT there on every change of a system, and with `nics`, the MACs each
    server's EthernetInterfaces lists."""
    fake = [{"uuid": ident, "name": node, "power_state": "Off", "external_notifier": notify_url is not None,
             **({"nics": [{"mac": str(mac)} for mac in nics[node]]} if nics and node in nics else {})}
            for node, ident in systems.items()]
    lines = [f"SUSHY_EMULATOR_LISTEN_IP = {listen!r}", f"SUSHY_EMULATOR_LISTEN_PORT = {int(port)}",
             "SUSHY_EMULATOR_FAKE_DRIVER = True", f"SUSHY_EMULATOR_FAKE_SYSTEMS = {fake!r}",
             f"SUSHY_EMULATOR_AUTH_FILE = {str(auth_file)!r}", f"SUSHY_EMULATOR_STATE_DIR = {str(state_dir)!r}"]
    if notify_url is not None:
        lines.append(f"EXTERNAL_NOTIFICATION_URL = {notify_url!r}")
    return "\n".join(lines) + "\n"


# Run by the emulator's own Python: sushy-tools' basic auth takes bcrypt digests only, and bcrypt is its
# dependency, so the environment that runs the emulator has it whatever extras clusterforge was installed with.
_DIGEST = "import sys, bcrypt; sys.stdout.write(bcrypt.hashpw(sys.stdin.buffer.read(), bcrypt.gensalt(5)).decode())"


def emulator_python(emulator: Path) -> Path:
    """The interpreter that runs `emulator`: its script's `#!` line names it (pip writes the environment's own
    Python there), else the `python` beside it (an environment's bin folder)."""
    try:
        with open(emulator, "rb") as script:
            first = script.readline(512).decode(errors="replace")
    except OSError:
        first = ""
    named = first[2:].split(maxsplit=1) if first.startswith("#!") else []
    if named and "python" in Path(named[0]).name:
        return Path(named[0])
    return emulator.with_name("python")


def login_digest(emulator: Path, password: str) -> str:
    """The bcrypt digest of `password` for the emulator's htpasswd file, made by the emulator's own Python (the
    password goes on its standard input, never its command line)."""
    python = emulator_python(emulator)
    try:
        done = subprocess.run([str(python), "-c", _DIGEST], input=password.encode(), capture_output=True,
                              check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterforgeError(Problem(f"the BMC emulator's Python did not run: {exc}", str(python))) from exc
    digest = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not digest.startswith("$2"):
        said = done.stderr.decode(errors="replace").strip()[-300:]
        raise ClusterforgeError(Problem(f"the BMC emulator's Python could not make the login's digest: {said}",
                                        str(python)))
    return digest


def emulator_program() -> Path:
    """sushy-tools' `sushy-emulator`, from this Python's environment (the `lab` extra)."""
    program = Path(sys.executable).with_name("sushy-emulator")
    if not program.is_file():
        raise ClusterforgeError(Problem("OpenStack's sushy-tools (the lab's BMC emulator for power-saved pools) is "
                                        "not installed here", str(program.parent),
                                        hint="install clusterforge with its `lab` extra (from a checkout: "
                                             "pip install -c requirements/lock.txt -e '.[lab]')"))
    return program


def emulator_command(config: Path) -> list[str]:
    return [str(emulator_program()), "--fake", "--config", str(config)]


def wait_ready(url: str, systems: int, auth: tuple[str, str], alive: Callable[[], bool] | None = None,
               timeout: float = READY_S) -> None:
    """Until the emulator lists every system. The Systems list, not the service root: the emulator builds its fake
    driver on first use, and concurrent first requests each build one, the last re-inserting a system (Off,
    nothing pending) over a reset another request already took. One request builds it here, alone."""
    import requests

    deadline = time.monotonic() + timeout
    while True:
        try:
            listed = requests.get(f"{url}/redfish/v1/Systems", auth=auth, timeout=5)
            if listed.ok and listed.json().get("Members@odata.count") == systems:
                return
        except (requests.ConnectionError, requests.Timeout, ValueError):
            pass
        if (alive is not None and not alive()) or time.monotonic() > deadline:
            raise ClusterforgeError(Problem(f"the BMC emulator at {url} did not answer with {systems} systems"))
        time.sleep(0.2)
