"""Network rules. QM9700: k = 64 ports; two tiers carry k²/2 = 2,048 endpoints, three k³/4 = 65,536.
A DGX H100 has 8 compute NICs, so 128 nodes = 1,024 endpoints = 32 leaves and 16 spines."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.target_kernel import load_catalog
from tests.policies.builders import aws, config, design, found


def dgx(count: int) -> list[dict]:
    return [{"name": "gpu", "hardware": "dgx-h100", "count": count, "partition": "train"}]


@pytest.mark.parametrize(("nodes", "tiers", "fails"), [
    (256, 2, False),    # 2,048 endpoints = k²/2
    (257, 2, True),     # 2,056 > 2,048
    (257, "auto", False),
    (8192, "auto", False),   # 65,536 = k³/4
    (8193, "auto", True),
])
def test_net001_tiers(nodes: int, tiers: object, fails: bool) -> None:
    data = design(dgx(nodes), fabric={"kind": "infiniband", "switch": "qm9700", "tiers": tiers})
    assert found(data) == (["NET-001"] if fails else [])


@pytest.mark.parametrize(("ratio", "allowed", "fails"), [(1.0, 1.0, False), (2.0, 1.0, True), (2.0, 2.0, False)])
def test_net002_oversubscription(ratio: float, allowed: float, fails: bool) -> None:
    data = design(fabric={"kind": "infiniband", "switch": "qm9700", "oversubscription": ratio})
    cfg = config(**{"NET-002": {"max_oversubscription": allowed}})
    assert found(data, config=cfg) == (["NET-002"] if fails else [])


FOUR_NIC = """\
apiVersion: clusterforge/v1
kind: Catalog
hardware:
  gpu-4nic:
    kind: server
    description: 8-GPU server with 4 compute NICs
    gpus: {model: H100-SXM5, count: 8, memory_gib: 80}
    nics: {compute: 4, speed_gbps: 400}
    max_power_kw: 10
    psus: {count: 4, required: 2}
    u_height: 6
    weight_kg: 100
    depth_mm: 900
    max_inlet_c: 30
    sources: {gpus: t, nics: t, max_power_kw: t, psus: t, u_height: t, weight_kg: t, depth_mm: t, max_inlet_c: t}
"""


@pytest.mark.parametrize(("rails", "fails"), [(True, True), (False, False)])
def test_net003_rail_alignment(tmp_path: Path, rails: bool, fails: bool) -> None:
    extra = tmp_path / "cat.yaml"
    extra.write_text(FOUR_NIC)
    pools = [{"name": "gpu", "hardware": "gpu-4nic", "count": 4, "partition": "train"}]
    data = design(pools, fabric={"kind": "infiniband", "switch": "qm9700", "rail_optimized": rails})
    assert found(data, catalog=load_catalog([extra])) == (["NET-003"] if fails else [])


@pytest.mark.parametrize(("declared", "fails"), [
    ({"leaves": 32, "spines": 16}, False),
    ({"leaves": 31}, True),            # 1,024 / 31 = 34 per leaf > 32 downlinks
    ({"spines": 15}, True),            # 32 × 32 uplinks / 15 = 69 per spine > 64 ports
])
def test_net004_declared_switches(declared: dict, fails: bool) -> None:
    data = design(fabric={"kind": "infiniband", "switch": "qm9700", **declared})
    assert found(data) == (["NET-004"] if fails else [])


@pytest.mark.parametrize(("hardware", "interfaces", "expect"), [
    ("p5.48xlarge", 32, ([], [])),
    ("p5.48xlarge", 33, (["NET-005"], [])),
    ("p5.48xlarge", 16, ([], ["NET-005"])),
    ("p5en.48xlarge", 16, ([], [])),
    ("p5en.48xlarge", 32, (["NET-005"], [])),
    ("p6-b200.48xlarge", 8, ([], [])),
    ("p4d.24xlarge", 8, (["NET-005"], [])),
    ("p6-b300.48xlarge", 16, ([], [])),         # 17 cards, but card 0 carries no EFA: 16 is the maximum
    ("p6-b300.48xlarge", 17, (["NET-005"], [])),
])
def test_net005_efa_interfaces(hardware: str, interfaces: int, expect: tuple[list[str], list[str]]) -> None:
    data = aws(pools=[{"name": "gpu", "hardware": hardware, "count": 2, "partition": "train",
                       "efa_interfaces": interfaces}])
    # the fabric rules' verdict (a Capacity Block of some of these types has no price in the table: COST-003)
    warnings = [rule for rule in found(data, level="warning") if not rule.startswith("COST-")]
    assert (found(data), warnings) == expect


def test_net005_layout_shared_with_crossguard() -> None:
    from clusterforge.catalog import Instance
    from clusterforge.targets.aws.efa import Interface, efa_layout_problems

    p5 = load_catalog().of("p5.48xlarge", Instance)
    good = [Interface(0, 0, "efa"), *[Interface(c, 1, "efa-only") for c in range(1, 32)]]
    assert efa_layout_problems("p5.48xlarge", p5, good) == []
    assert efa_layout_problems("p5.48xlarge", p5, [*good, Interface(32, 1, "efa-only")])
    assert efa_layout_problems("p5.48xlarge", p5, [Interface(0, 0, "efa-only")])
    assert efa_layout_problems("p5.48xlarge", p5, [Interface(0, 0, "efa"), Interface(0, 1, "efa")])
    b300 = load_catalog().of("p6-b300.48xlarge", Instance)
    aws_layout = [Interface(0, 0, "interface"), *[Interface(c, 0, "efa-only") for c in range(1, 17)]]
    assert efa_layout_problems("p6-b300.48xlarge", b300, aws_layout) == []
    assert efa_layout_problems("p6-b300.48xlarge", b300, [Interface(0, 0, "efa")]) == [
        "network card 0 of p6-b300.48xlarge carries no EFA (ENA only): EFA interfaces go on cards 1..16"]


@pytest.mark.parametrize(("pool_extra", "zones", "fails"), [
    ({}, ["use1-az4"], False),
    ({}, ["use1-az4", "use1-az5"], True),
    ({"availability_zone": "use1-az5"}, ["use1-az4", "use1-az5"], False),
    ({"availability_zone": "use1-az6"}, ["use1-az4", "use1-az5"], True),
])
def test_net006_placement(pool_extra: dict, zones: list[str], fails: bool) -> None:
    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 2, "partition": "train", **pool_extra}])
    data["aws"]["availability_zones"] = zones
    assert found(data) == (["NET-006"] if fails else [])


@pytest.mark.parametrize(("capacity", "warns"), [
    ({"type": "on-demand"}, True),
    ({"type": "odcr", "reservation_id": "cr-0123456789abcdef0"}, False),
    ({"type": "capacity-block", "reservation_id": "cr-0123456789abcdef0"}, False),
])
def test_net006_an_explicit_opt_out_warns_and_reserved_capacity_needs_no_group(capacity: dict, warns: bool) -> None:
    """AWS placed reserved capacity when it was reserved; on demand, an explicit `placement: none` is the user's
    call (ParallelCluster's validator warns, as AWS's own p5 sample does it): a warning, never an error."""
    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 2, "partition": "train",
                       "placement": "none"}])
    data["aws"]["capacity"] = capacity
    assert found(data) == []
    assert found(data, level="warning").count("NET-006") == (1 if warns else 0)


FAST_NIC = FOUR_NIC.replace("gpu-4nic", "gpu-800g").replace("4 compute NICs", "8 compute NICs at 800G").replace(
    "nics: {compute: 4, speed_gbps: 400}", "nics: {compute: 8, speed_gbps: 800}")


@pytest.mark.parametrize(("hardware", "switch", "fails"), [
    ("gpu-800g", "qm9700", True),     # an 800G NIC on a 400G port
    ("gpu-800g", "q3400", False),     # 800G on 800G
    ("dgx-h100", "q3400", False),     # 400G on 800G: the planner splits the ports
    ("dgx-h100", "qm9700", False),
])
def test_net007_nic_faster_than_the_port(tmp_path: Path, hardware: str, switch: str, fails: bool) -> None:
    extra = tmp_path / "cat.yaml"
    extra.write_text(FAST_NIC)
    pools = [{"name": "gpu", "hardware": hardware, "count": 4, "partition": "train"}]
    data = design(pools, fabric={"kind": "infiniband", "switch": switch})
    assert found(data, catalog=load_catalog([extra])) == (["NET-007"] if fails else [])
