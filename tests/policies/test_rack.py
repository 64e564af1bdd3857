"""Rack rules. Base rack: 42U with 2U reserved, 150 kg tare, 1,361 kg rating, 0.72 m²; a DGX H100 is 8U,
130.45 kg, 897 mm deep. Two DGX: 16U + 2U = 18U; 150 + 260.9 = 410.9 kg; 410.9 / 0.72 = 570.7 kg/m²."""

from __future__ import annotations

import pytest

from tests.policies.builders import found, onprem, rack


@pytest.mark.parametrize(("reserved", "fails"), [(26, False), (27, True)])
def test_rck001_u_space(reserved: int, fails: bool) -> None:
    # 16U + 26U = 42U fits; 16U + 27U = 43U does not
    assert found(onprem([rack(count=2, reserved_u=reserved)])) == (["RCK-001"] if fails else [])


@pytest.mark.parametrize(("second", "fails"), [(9, False), (8, True), (5, True)])
def test_rck001_overlapping_positions(second: int, fails: bool) -> None:
    # first DGX at U1-U8; a second from U9 is clear, from U8 shares U8, from U5 overlaps U5-U8
    devices = [{"pool": "gpu", "count": 1, "position": 1}, {"pool": "gpu", "count": 1, "position": second}]
    assert found(onprem([rack(count=0, devices=devices)])) == (["RCK-001"] if fails else [])


def test_rck001_position_above_the_top() -> None:
    # a DGX from U36 reaches U43 in a 42U rack
    assert found(onprem([rack(count=0, devices=[{"pool": "gpu", "count": 1, "position": 36}])])) == ["RCK-001"]


@pytest.mark.parametrize(("rating", "fails"), [(411, False), (410, True)])
def test_rck002_weight(rating: float, fails: bool) -> None:
    assert found(onprem([rack(count=2, max_weight_kg=rating)])) == (["RCK-002"] if fails else [])


@pytest.mark.parametrize(("floor", "fails"), [(571, False), (570, True)])
def test_rck003_floor(floor: float, fails: bool) -> None:
    assert found(onprem([rack(count=2)], floor_load_kg_per_m2=floor)) == (["RCK-003"] if fails else [])


@pytest.mark.parametrize(("depth", "fails"), [(897, False), (896, True)])
def test_rck004_depth(depth: int, fails: bool) -> None:
    assert found(onprem([rack(count=2, mounting_depth_mm=depth)])) == (["RCK-004"] if fails else [])


@pytest.mark.parametrize(("airflow", "fails"), [("front-to-rear", False), ("rear-to-front", True)])
def test_rck005_airflow(airflow: str, fails: bool) -> None:
    assert found(onprem([rack(count=2, airflow=airflow)])) == (["RCK-005"] if fails else [])


@pytest.mark.parametrize(("contract", "warns"), [(20.4, False), (20.0, True)])
def test_rck006_density_contract(contract: float, warns: bool) -> None:
    # 2 DGX = 20.4 kW
    data = onprem([rack(count=2, contracted_kw=contract)])
    assert ("RCK-006" in found(data, level="warning")) is warns and found(data) == []


def test_site_wide_contract_applies_to_every_rack() -> None:
    assert "RCK-006" in found(onprem([rack(count=2)], contracted_kw_per_rack=15), level="warning")


def _auto(nodes: int) -> dict:
    """Two empty racks the planner fills: 3 DGX H100 each by A/B power (34.5 kW a side; 4 would draw 40.8 kW)."""
    return onprem([rack("a01", count=0), rack("a02", count=0)],
                  pools=[{"name": "gpu", "hardware": "dgx-h100", "count": nodes, "partition": "train"}])


@pytest.mark.parametrize(("nodes", "fails"), [(6, False), (7, True)])
def test_rck008_nodes_that_fit_in_no_rack(nodes: int, fails: bool) -> None:
    assert found(_auto(nodes)) == (["RCK-008"] if fails else [])


def test_rck008_names_the_pool_and_the_count() -> None:
    from tests.policies.builders import evaluate_data

    [finding] = [f for f in evaluate_data(_auto(8)).findings if f.id == "RCK-008"]
    assert finding.path == "pools[0].count" and finding.measured == 2 and finding.level == "error"
    assert "2 node(s) of pool gpu fit in no rack (6 of 8 placed)" in finding.message
