"""docs/contributing.md's BMC protocol recipe, performed: the Wake-on-LAN module it shows, registered with the one
table entry it names in a fresh process, is all `clusterforge power on` needs to reach a node through it. The
packet is caught on a loopback port and read back; the files the recipe touches are counted."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from tests.test_contributing import DOC, ROOT
from tests.test_recipe_accelerator import code_block

MAC = "52:54:00:12:34:56"
REGISTER = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("clusterforge.bmc.wol", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
from clusterforge.bmc import ipmi, protocols, redfish
from clusterforge.bmc.interface import BmcProtocol
table = {{"BmcProtocol": BmcProtocol, "ipmi": ipmi, "redfish": redfish, "wol": module}}
exec({entry!r}, table)
protocols.PROTOCOLS.update(table["PROTOCOLS"])  # the file's table as the recipe's line has it
sys.argv = ["clusterforge", *sys.argv[2:]]
from clusterforge.cli.main import main
main()
"""


def test_the_wake_on_lan_recipe_powers_a_node_on_with_one_module_and_one_line(tmp_path: Path) -> None:
    module, entry = code_block("Add a BMC protocol", "python"), None
    section = DOC.read_text(encoding="utf-8").split("## Add a BMC protocol\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2 and blocks[0] == module
    entry = blocks[1].strip()
    assert entry.startswith("PROTOCOLS") and "\n" not in entry, "the registration is one line"
    table_line = next(line for line in (ROOT / "clusterforge" / "bmc" / "protocols.py").read_text().splitlines()
                      if line.startswith("PROTOCOLS"))
    assert entry.replace(', "wol": wol', "") == table_line, "the recipe's line is the table's, one entry added"
    (tmp_path / "wol.py").write_text(module)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(30)
        port = listener.getsockname()[1]
        document = tmp_path / "bmcs.yaml"
        document.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": {"url": f"wol://127.0.0.1:{port}", "system": MAC,
                                                                  "protocol": "wol"}}}))
        env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "CLUSTERFORGE_BMC_USERNAME": "unused",
               "CLUSTERFORGE_BMC_PASSWORD": "unused"}
        result = subprocess.run([sys.executable, "-c", REGISTER.format(entry=entry), str(tmp_path / "wol.py"),
                                 "power", "on", "gpu-0001", "--bmcs", str(document)],
                                capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "magic packet sent" in result.stdout
        packet, _ = listener.recvfrom(1024)
    assert packet == b"\xff" * 6 + bytes.fromhex(MAC.replace(":", "")) * 16
    refused = subprocess.run([sys.executable, "-c", REGISTER.format(entry=entry), str(tmp_path / "wol.py"),
                              "power", "off", "gpu-0001", "--bmcs", str(document)],
                             capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert refused.returncode == 1 and "Wake-on-LAN can only power on, not off" in refused.stdout


def test_without_its_entry_the_protocol_is_refused_by_name(tmp_path: Path) -> None:
    """The entry is what makes it known: a document naming an unregistered protocol is exit 2 at its line."""
    document = tmp_path / "bmcs.yaml"
    document.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": {"url": "wol://127.0.0.1:9", "protocol": "wol"}}}))
    result = subprocess.run([sys.executable, "-m", "clusterforge", "power", "on", "gpu-0001", "--bmcs",
                             str(document)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                            env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert result.returncode == 2 and "no BMC protocol 'wol'" in result.stderr + result.stdout
