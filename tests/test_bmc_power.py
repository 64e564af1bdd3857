"""`clusterforge power` against a real Redfish service: OpenStack's sushy-tools emulator (fake driver, 64 systems,
basic auth) on loopback, and stand-in BMCs that answer 500, 401 or nothing. Each action is checked in the
emulator's own state, not in what the command printed."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sushy")
pytest.importorskip("sushy_tools")

from tests.bmc_emulator import PASSWORD, USER, Emulator, broken_bmc, emulator


@pytest.fixture(scope="module")
def bmcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with emulator(tmp_path_factory.mktemp("emulator")) as running:
        yield running


@pytest.fixture
def login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_BMC_USERNAME", USER)
    monkeypatch.setenv("CLUSTERFORGE_BMC_PASSWORD", PASSWORD)


def document(tmp_path: Path, emulated: Emulator, extra: dict[str, dict] | None = None) -> Path:
    entries = {node: {"url": emulated.url, "system": ident} for node, ident in emulated.ids.items()}
    path = tmp_path / "bmcs.yaml"
    path.write_text(yaml.safe_dump({"defaults": {"verify_tls": False}, "bmcs": {**entries, **(extra or {})}}))
    return path


def power(cli: Callable, *args: str) -> tuple[int, dict]:
    result = cli("power", *args, "-f", "json", "--settle", "90", "--timeout", "60", "--concurrency", "16")
    return result.exit_code, json.loads(result.output) if result.output.startswith("{") else {"text": result.output}


def test_on_off_cycle_and_a_pxe_boot_change_the_emulators_systems(cli, bmcs: Emulator, login, tmp_path) -> None:
    path = document(tmp_path, bmcs)
    code, answer = power(cli, "on", "gpu-[0001-0064]", "--bmcs", str(path))
    assert code == 0 and answer["ok"] and len(answer["nodes"]) == 64, answer.get("failed", answer)
    assert {bmcs.system(n)["PowerState"] for n in bmcs.ids} == {"On"}
    code, answer = power(cli, "off", "gpu-[0001-0008]", "--bmcs", str(path))
    assert code == 0 and {v["power"] for v in answer["nodes"].values()} == {"Off"}
    assert [bmcs.system(f"gpu-{i:04d}")["PowerState"] for i in (1, 8, 9)] == ["Off", "Off", "On"]
    code, answer = power(cli, "cycle", "gpu-[0008-0009]", "--boot", "pxe", "--bmcs", str(path))
    assert code == 0, answer
    assert answer["nodes"]["gpu-0008"]["did"].startswith("powered on")  # it was off
    assert answer["nodes"]["gpu-0009"]["did"].startswith("cycled")
    for node in ("gpu-0008", "gpu-0009"):
        system = bmcs.system(node)
        assert system["PowerState"] == "On" and system["Boot"]["BootSourceOverrideTarget"] == "Pxe"
    assert bmcs.system("gpu-0010")["Boot"]["BootSourceOverrideTarget"] != "Pxe"
    code, answer = power(cli, "status", "gpu-[0007-0008]", "--bmcs", str(path))
    assert code == 0 and {n: v["power"] for n, v in answer["nodes"].items()} == {"gpu-0007": "Off",
                                                                                  "gpu-0008": "On"}


def test_a_failing_bmc_is_reported_per_node_and_the_others_complete(cli, bmcs: Emulator, login, tmp_path) -> None:
    with broken_bmc(500) as failing, broken_bmc(401) as refusing, broken_bmc(200, delay_s=30) as silent:
        extra = {"gpu-0101": {"url": failing}, "gpu-0102": {"url": refusing}, "gpu-0103": {"url": silent}}
        path = document(tmp_path, bmcs, extra)
        result = cli("power", "off", "gpu-[0011-0014],gpu-[0101-0103]", "--bmcs", str(path), "--timeout", "2",
                     "--attempts", "2", "--settle", "60")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("Off") and "gpu-[0011-0014]" in line for line in lines), result.output
    assert any("gpu-0101" in line and "HTTP 500" in line for line in lines), result.output
    assert any("gpu-0102" in line and "credentials refused (HTTP 401)" in line for line in lines), result.output
    assert any("gpu-0103" in line and "no answer within 2 s" in line for line in lines), result.output
    assert "power off: 4 of 7 nodes done, 3 failed" in result.output
    assert {bmcs.system(f"gpu-{i:04d}")["PowerState"] for i in range(11, 15)} == {"Off"}


def test_wrong_credentials_are_refused_per_node_and_never_printed(cli, bmcs: Emulator, tmp_path,
                                                                   monkeypatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_BMC_USERNAME", USER)
    monkeypatch.setenv("CLUSTERFORGE_BMC_PASSWORD", "not-the-password")
    result = cli("power", "status", "gpu-[0001-0003]", "--bmcs", str(document(tmp_path, bmcs)))
    assert result.exit_code == 1
    assert "FAILED" in result.output and "credentials refused (HTTP 401)" in result.output
    assert "not-the-password" not in result.output


@pytest.mark.parametrize(("entry", "message"), [
    ({"url": "https://root:calvin@10.2.0.11"}, "carries no user or password"),
    ({"url": "ftp://10.2.0.11"}, "https://HOST[:PORT]"),
    ({"url": "https://10.2.0.11/redfish/v1"}, "is its root"),
    ({"url": "https://10.2.0.11", "system": "../Managers/1"}, "system"),
    ({"url": "https://10.2.0.11", "password": "x"}, "password"),
    ({"url": "https://10.2.0.11\n  {{ lookup('pipe', 'id') }}"}, "a DNS name, an IPv4 address"),
    ({"url": "https://10.2.0.11:0"}, "its port 1-65535"),
    ({"url": "https://10.2.0.11:99999"}, "its port 1-65535"),
])
def test_a_bad_bmc_document_is_exit_2_with_its_line(cli, login, tmp_path, entry: dict, message: str) -> None:
    path = tmp_path / "bmcs.yaml"
    path.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": entry}}))
    result = cli("power", "status", "gpu-0001", "--bmcs", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert re.search(rf"^{re.escape(str(path))}:[23]: bmcs\.gpu-0001", result.output), result.output
    assert message in result.output, result.output


def test_credentials_come_from_a_private_file_or_the_environment(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("CLUSTERFORGE_BMC_USERNAME", raising=False)
    monkeypatch.delenv("CLUSTERFORGE_BMC_PASSWORD", raising=False)
    path = tmp_path / "bmcs.yaml"
    path.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": {"url": "https://10.2.0.11"}}}))
    result = cli("power", "status", "gpu-0001", "--bmcs", str(path))
    assert result.exit_code == 2 and "no BMC credentials" in result.output
    secret = tmp_path / "bmc.yaml"
    secret.write_text("username: admin\npassword: hunter2\n")
    os.chmod(secret, 0o644)
    result = cli("power", "status", "gpu-0001", "--bmcs", str(path), "--credentials", str(secret))
    assert result.exit_code == 2 and "chmod 600" in result.output and "hunter2" not in result.output
    result = cli("power", "status", "gpu-0002", "--bmcs", str(path), "--credentials", str(secret))
    assert result.exit_code == 2


def test_nodes_the_document_lacks_are_named_at_once(cli, login, tmp_path) -> None:
    path = tmp_path / "bmcs.yaml"
    path.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": {"url": "https://10.2.0.11"}}}))
    result = cli("power", "on", "gpu-[0001-0100]", "--bmcs", str(path))
    assert result.exit_code == 2 and "99 node(s) have no BMC in the document: gpu-[0002-0100]" in result.output
