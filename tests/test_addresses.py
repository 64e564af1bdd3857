"""On-prem addresses: a `NAME ADDRESS` file, checked against the rendered inventory's host names, becomes an
inventory setting `ansible_host` that Ansible merges with the rendered one (`inventory --addresses`, or
`provision --addresses` in one step). Untrusted input: every mistake is exit 2 with `file:line`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app

ANSIBLE_INVENTORY = Path(sys.executable).parent / "ansible-inventory"


@pytest.fixture
def rendered(rendered_onprem: Path) -> Path:
    return rendered_onprem


def _plain(value: object) -> object:
    """ansible-inventory's JSON spells an `!unsafe` string as {"__ansible_unsafe": text}."""
    return value.get("__ansible_unsafe") if isinstance(value, dict) else value


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "addresses.txt"
    path.write_text(text)
    return path


def test_addresses_become_ansible_host_merged_with_the_rendered_inventory(rendered: Path, tmp_path: Path) -> None:
    if not ANSIBLE_INVENTORY.exists():
        pytest.skip("ansible-core not installed")
    given = _write(tmp_path, "# rack a01\ngpu-0001 10.1.0.11\n10.1.0.12  gpu-0002   # /etc/hosts order\n"
                             "gpu-0003 fd00::13\n")
    out = tmp_path / "addresses.yml"
    result = CliRunner().invoke(app, ["inventory", "--addresses", str(given), "--rendered", str(rendered),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    merged = subprocess.run([str(ANSIBLE_INVENTORY), "-i", str(rendered / "inventory" / "hosts.yml"), "-i", str(out),
                             "--list"], capture_output=True, text=True, check=True)
    hostvars = json.loads(merged.stdout)["_meta"]["hostvars"]
    assert [_plain(hostvars[h].get("ansible_host")) for h in ("gpu-0001", "gpu-0002", "gpu-0003", "gpu-0004")] == [
        "10.1.0.11", "10.1.0.12", "fd00::13", None]
    assert _plain(hostvars["gpu-0001"]["rack"]) == "a01"  # the rendered facts stay
    assert "pool_gpu" in json.loads(merged.stdout)["all"]["children"]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("gpu-0001 10.1.0.11\ngpu-0002 10.1.0.300\n", 2, "no IP address ('10.1.0.300' is not one)"),
    ("gpu-0001 10.1.0.11\n\ngpu-0001 10.1.0.12\n", 3, "gpu-0001: given twice (first on line 1)"),
    ("gpu-0001 10.1.0.11\ngpu-0002 10.1.0.11\n", 2, "gpu-0002: 10.1.0.11 is already gpu-0001's (line 1)"),
    ("gpu-0001 10.1.0.11 extra\n", 1, "expected NAME ADDRESS, found 3 field(s)"),
    ("gpu-0001 gpu-0002\n", 1, "no IP address"),
    ("{{lookup('pipe','id')}} 10.1.0.11\n", 1, "is not a host name"),
    ("gpu-0001 10.1.0.11\ngpu-9999 10.1.0.12\n", 2, "gpu-9999: no such host in"),
])
@pytest.mark.parametrize("command", ["inventory", "provision"])
def test_a_bad_line_is_exit_2_with_file_and_line(rendered: Path, tmp_path: Path, text: str, line: int,
                                                 message: str, command: str) -> None:
    given = _write(tmp_path, text)
    args = (["inventory", "--addresses", str(given), "--rendered", str(rendered)] if command == "inventory"
            else ["provision", str(rendered), "--addresses", str(given), "--list-hosts"])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"{given}:{line}: " in result.output and message in result.output, result.output
    assert "Traceback" not in result.output


def test_provision_reaches_hosts_at_their_addresses(rendered: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`provision --addresses` passes the addresses to ansible-playbook as a second inventory."""
    pytest.importorskip("ansible_runner")
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path / "cache"))
    given = _write(tmp_path, "gpu-0001 10.1.0.11\n")
    result = CliRunner().invoke(app, ["provision", str(rendered), "--addresses", str(given), "--list-hosts",
                                      "-l", "gpu-0001"])
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["gpu-0001"]
    [written] = (tmp_path / "cache").rglob("addresses.yml")
    assert "ansible_host: !unsafe 10.1.0.11" in written.read_text()
    [command] = (tmp_path / "cache").rglob("artifacts/*/command")
    assert str(written) in json.loads(command.read_text())["command"]


def test_inventory_needs_one_source() -> None:
    result = CliRunner().invoke(app, ["inventory"])
    assert result.exit_code == 2 and "--from-outputs" in result.output and "--addresses" in result.output
