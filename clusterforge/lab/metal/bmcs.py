"""The metal lab's BMCs: OpenStack's sushy-tools Redfish emulator with its libvirt driver, one system per virtual
server (the domain's UUID is the system id the BMC document names), so a Redfish power-on starts the virtual
machine and a boot override changes what it boots, as Ironic's and Metal3's CI drive theirs.

The emulator runs from a Python environment made from Debian's python3 with its system packages, where Debian's
python3-libvirt imports (a pip build of libvirt-python needs libvirt's headers and a compiler); sushy-tools is
pinned as the lab's (pyproject `lab`). It listens on the lab bridge's host address, behind the same basic auth
and per-lab password as the container lab's emulator (lab/bmc_service.py writes the document and the login).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_text
from clusterforge.lab import bmc_service
from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.metal import virt
from clusterforge.lab.paths import shared_cache

SUSHY_TOOLS = "sushy-tools==2.2.0"  # the lab's pin (pyproject.toml, extra `lab`)
# VirtualBMC, the servers' IPMI service (lab/metal/vbmc.py): pinned here, not in an extra, since it needs
# libvirt's Python binding, which only this environment (Debian's python3-libvirt) has
VIRTUALBMC = "virtualbmc==3.3.0"
EMULATORS = {"sushy-emulator": SUSHY_TOOLS, "vbmcd": VIRTUALBMC}  # each program, and the release that has it
SYSTEM_PYTHON = Path("/usr/bin/python3")


def environment() -> Path:
    """The emulators' Python environment (made once per machine, in the lab's shared cache, and given what a
    newer clusterforge adds); the Redfish emulator's program in it."""
    venv = shared_cache() / "metal-bmc-venv"
    missing = [pin for name, pin in EMULATORS.items() if not (venv / "bin" / name).is_file()]
    if not missing:
        return venv / "bin" / "sushy-emulator"
    if not SYSTEM_PYTHON.is_file():
        raise ClusterforgeError(Problem("Debian's python3 is not installed", "--metal", hint="apt-get install python3"))
    check = subprocess.run([str(SYSTEM_PYTHON), "-c", "import libvirt, venv"], capture_output=True, check=False)
    if check.returncode != 0:
        raise ClusterforgeError(Problem("Debian's python3 cannot import libvirt and venv", "--metal",
                                        hint="apt-get install python3-libvirt python3-venv (scripts/metal-host-setup)"))
    print(f"making the BMC emulators' environment ({', '.join(missing)}, libvirt driver): {venv}", file=sys.stderr)
    if not (venv / "bin" / "pip").is_file():
        subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--system-site-packages", str(venv)], check=True)
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                                *missing], capture_output=True, text=True, check=False)
    if installed.returncode != 0:
        raise ClusterforgeError(Problem(f"pip could not install {', '.join(missing)}: "
                                        f"{installed.stderr.strip()[-400:]}", str(venv)))
    return venv / "bin" / "sushy-emulator"


def config(listen: str, port: int, systems: dict[str, str], auth_file: Path, state_dir: Path) -> str:
    """The emulator's configuration (a Python file it executes: every value written as a literal): libvirt's
    system URI, only this lab's domains, the lab's login, its own state folder."""
    lines = [f"SUSHY_EMULATOR_LISTEN_IP = {listen!r}", f"SUSHY_EMULATOR_LISTEN_PORT = {int(port)}",
             f"SUSHY_EMULATOR_LIBVIRT_URI = {virt.URI!r}",
             f"SUSHY_EMULATOR_ALLOWED_INSTANCES = {sorted(systems.values())!r}",
             f"SUSHY_EMULATOR_AUTH_FILE = {str(auth_file)!r}", f"SUSHY_EMULATOR_STATE_DIR = {str(state_dir)!r}",
             "SUSHY_EMULATOR_IGNORE_BOOT_DEVICE = False"]
    return "\n".join(lines) + "\n"


def pid_file(files: BmcFiles) -> Path:
    return files.folder / "emulator.pid"


def start(files: BmcFiles) -> str:
    """Start the emulator for the servers of `files`' settings (lab/bmc_service.prepare); its URL once every
    system answers."""
    program = environment()
    settings = json.loads(files.settings.read_text(encoding="utf-8"))
    address, port, systems = settings["address"], int(settings["port"]), dict(settings["systems"])
    files.state.mkdir(parents=True, exist_ok=True)
    write_text(files.emulator_config, config(address, port, systems, files.htpasswd, files.state))
    stop(files)
    with open(files.log, "ab") as log:
        proc = subprocess.Popen([str(program), "--config", str(files.emulator_config)], stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    write_text(pid_file(files), f"{proc.pid}\n")
    login = yaml.safe_load(files.credentials.read_text(encoding="utf-8"))
    url = f"http://{address}:{port}"
    bmc_service.wait_ready(url, len(systems), (login["username"], login["password"]),
                           alive=lambda: proc.poll() is None)
    return url


def stop(files: BmcFiles) -> bool:
    """Stop the emulator (its pid file's process); whether one ran."""
    path = pid_file(files)
    if not path.is_file():
        return False
    try:
        os.kill(int(path.read_text().strip()), signal.SIGTERM)
        stopped = True
    except (ProcessLookupError, ValueError):
        stopped = False
    path.unlink(missing_ok=True)
    return stopped
