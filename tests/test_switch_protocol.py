"""A fabric's kind must be what its switch and its nodes' NICs speak (NET-008).

Published figures: Quantum-2 QM9700 and Quantum-X800 Q3400 are InfiniBand switch systems (their user manuals:
"Data interfaces - InfiniBand"); Spectrum-4 SN5600 is an Ethernet switch (SN5000 user manual, 64 x 800GbE).
ConnectX-7 runs InfiniBand (EDR to NDR) or Ethernet (NVIDIA OFED introduction: VPI); ConnectX-8 runs XDR
InfiniBand or 2 x 400GbE (firmware release notes); AMD Pensando Pollara 400 is an Ethernet NIC (amd.com). So
RoCE or Ethernet on a QM9700 cannot link, InfiniBand on an SN5600 cannot either, and a Pollara NIC cannot join an
InfiniBand fabric whatever the switch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from clusterforge.catalog import Switch
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES
from tests.policies.builders import design, found, messages


def network(ids: list[str]) -> list[str]:
    """The fabric's findings only: the software rules judge the version pins, not the wiring."""
    return [i for i in ids if i.startswith("NET-")]


AMD_SOFTWARE = {"stack": "rocm", "rocm": "7.2.2", "rccl": "2.27.7", "amdgpu_driver": "30.30.3"}


def mi355x(kind: str, switch: str) -> dict:
    return design([{"name": "gpu", "hardware": "mi355x-8gpu", "count": 16, "partition": "train"}],
                  fabric={"kind": kind, "switch": switch}, software=AMD_SOFTWARE)


def dgx(kind: str, switch: str, hardware: str = "dgx-h100") -> dict:
    return design([{"name": "gpu", "hardware": hardware, "count": 16, "partition": "train"}],
                  fabric={"kind": kind, "switch": switch})


@pytest.mark.parametrize(("key", "protocol"), [("qm9700", "infiniband"), ("q3400", "infiniband"),
                                               ("sn5600", "ethernet"), ("arista-7060x6-64pe", "ethernet")])
def test_every_catalog_switch_carries_its_protocol_with_a_source(key: str, protocol: str) -> None:
    switch = load_catalog().of(key, Switch)
    assert switch.protocol == protocol and switch.sources["protocol"]


@pytest.mark.parametrize("kind", ["roce", "ethernet"])
def test_ethernet_fabrics_on_an_infiniband_switch_fail(kind: str) -> None:
    data = dgx(kind, "qm9700")
    assert "NET-008" in found(data)
    [message] = messages(data, "NET-008")
    article = "an" if kind == "ethernet" else "a"
    assert message.startswith(f"{article} {kind} fabric needs an Ethernet switch; qm9700 is an InfiniBand switch")


def test_infiniband_on_an_ethernet_switch_fails() -> None:
    data = dgx("infiniband", "sn5600")
    assert network(found(data)) == ["NET-008"]
    [message] = messages(data, "NET-008")
    assert message.startswith("an infiniband fabric needs an InfiniBand switch; sn5600 is an Ethernet switch")


@pytest.mark.parametrize(("kind", "switch", "hardware"), [
    ("infiniband", "qm9700", "dgx-h100"), ("infiniband", "qm9700", "dgx-b200"),
    ("roce", "sn5600", "dgx-h100"), ("ethernet", "arista-7060x6-64pe", "dgx-h200"),  # ConnectX-7 is VPI
])
def test_vendor_supported_nvidia_designs_pass(kind: str, switch: str, hardware: str) -> None:
    assert network(found(dgx(kind, switch, hardware), level=None)) == []


def test_mi355x_pollara_on_ethernet_sn5600_passes() -> None:
    assert network(found(mi355x("ethernet", "sn5600"), level=None)) == []
    assert network(found(mi355x("roce", "arista-7060x6-64pe"), level=None)) == []


def test_mi355x_pollara_on_an_infiniband_fabric_fails() -> None:
    data = mi355x("infiniband", "qm9700")
    assert "NET-008" in found(data)
    [message] = messages(data, "NET-008")
    assert message.startswith("mi355x-8gpu's compute NICs run Ethernet only; an infiniband fabric needs "
                              "InfiniBand NICs")


def test_a_site_switch_without_a_protocol_is_an_input_error(cli, tmp_path: Path) -> None:
    catalog = tmp_path / "site.yaml"
    entry = yaml.safe_load(Path("clusterforge/catalog/data/switches.yaml").read_text())["hardware"]["qm9700"]
    entry.pop("protocol", None)
    entry["sources"].pop("protocol", None)
    catalog.write_text(yaml.safe_dump({"apiVersion": "clusterforge/v1", "kind": "Catalog",
                                       "hardware": {"site-ib": entry}}, sort_keys=False))
    result = cli("check", EXAMPLES / "onprem-dgx-h100.yaml", "--catalog", catalog)
    assert result.exit_code == 2, result.output
    assert re.search(r"site\.yaml:\d+: hardware\.site-ib(\.protocol)?: .*protocol", result.output), result.output
    assert "Traceback" not in result.output


def test_roce_on_qm9700_fails_in_every_command(cli, tmp_path: Path) -> None:
    data = yaml.safe_load((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    data["fabric"]["kind"] = "roce"
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(yaml.safe_dump(data, sort_keys=False))
    check = cli("check", blueprint, "-f", "json")
    assert check.exit_code == 1 and "NET-008" in {f["id"] for f in json.loads(check.stdout)["findings"]}
    plan = json.loads(cli("plan", blueprint, "-f", "json").stdout)["check"]
    assert plan["verdict"] == "fail" and "NET-008" in {f["id"] for f in plan["findings"]}
    render = cli("render", blueprint, "-o", tmp_path / "out")
    assert render.exit_code == 1 and "NET-008" in render.stderr
