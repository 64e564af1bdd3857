"""Cooling rules. Air heat = nameplate kW × (1 − liquid fraction); a DGX H100 is 10.2 kW of air heat.
A GB200 NVL72 is 132 kW with 0.85 to liquid: 112.2 kW liquid, 19.8 kW air."""

from __future__ import annotations

import pytest

from tests.policies.builders import evaluate_data, feed, found, messages, onprem, rack

AIR = {"kind": "air"}


@pytest.mark.parametrize(("count", "cooling", "expect"), [
    (2, AIR, []),                                   # 20.4 kW of 30 kW default air = 68 %
    (3, AIR, ["CLG-001"]),                          # 30.6 > 30
    (3, {"kind": "containment"}, []),               # 30.6 of 40 = 76.5 %
    (3, {"kind": "rdhx", "air_kw": 30}, ["CLG-001"]),  # door rated 30 kW
])
def test_clg001_air_ceiling(count: int, cooling: dict, expect: list[str]) -> None:
    assert found(onprem([rack(count=count, cooling=cooling)])) == expect


def test_clg001_warns_from_80_percent() -> None:
    # 20.4 of 25 = 81.6 %
    data = onprem([rack(count=2, cooling={"kind": "air", "air_kw": 25})])
    assert "CLG-001" in found(data, level="warning") and found(data) == []


def gb200_rack(cooling: dict, **extra: object) -> dict:
    big = [feed("g-a", "A", 415, 250), feed("g-b", "B", 415, 250)]  # 143.8 kW usable per side
    return rack("g01", count=1, u_height=48, max_weight_kg=2000, footprint_m2=1.2, feeds=big, cooling=cooling,
                **extra)


def gb200(cooling: dict, cdu: list[float] | None = None, **site: object) -> dict:
    pools = [{"name": "gpu", "hardware": "gb200-nvl72", "count": 1, "partition": "train"}]
    return onprem([gb200_rack(cooling)], pools=pools, row={"cooling": {"crah_kw": [200, 200],
                                                                        "cdu_kw": cdu or [150, 150]}}, **site)


def test_gb200_in_a_liquid_rack_passes() -> None:
    assert found(gb200({"kind": "liquid", "liquid_kw": 120})) == []


def test_clg002_liquid_hardware_in_an_air_rack() -> None:
    # no loop in the rack: all of the NVL72's heat goes to air, so the 50 kW door is over its ceiling too
    data = gb200({"kind": "rdhx", "air_kw": 50})
    assert found(data) == ["CLG-001", "CLG-002"]
    [message] = messages(data, "CLG-001")
    assert message.startswith("rack g01 rejects 132.0 kW to air")


def test_clg001_stands_when_clg002_is_waived_or_skipped() -> None:
    # a 132 kW system in a 25 kW air rack never passes the cooling rules, whatever is decided about CLG-002
    verdict = evaluate_data(gb200({"kind": "air", "air_kw": 25}), skip=["CLG-002"])
    assert verdict.failed and [f.id for f in verdict.findings if f.level == "error"] == ["CLG-001"]


@pytest.mark.parametrize(("cooling", "fails"), [
    ({"kind": "liquid", "liquid_kw": 112.2}, False),             # exactly the liquid share
    ({"kind": "liquid", "liquid_kw": 110}, True),                # 112.2 > 110
    ({"kind": "liquid", "liquid_kw": 120, "air_kw": 15}, True),  # 19.8 kW air > 15
])
def test_clg003_hybrid_split(cooling: dict, fails: bool) -> None:
    assert found(gb200(cooling)) == (["CLG-003"] if fails else [])


@pytest.mark.parametrize(("crah", "fails"), [([21, 21], False), ([20, 20], True), ([40], True)])
def test_clg004_row_air_n_plus_1(crah: list[float], fails: bool) -> None:
    # an air rack of 2 DGX = 20.4 kW to the room; N+1 counts Σ − largest: 21, 20, 0
    data = onprem([rack(count=2, cooling=AIR)], row={"cooling": {"crah_kw": crah}})
    assert found(data) == (["CLG-004"] if fails else [])


def test_clg004_rear_doors_take_heat_off_the_room() -> None:
    # the 50 kW door removes all 20.4 kW before the CRAHs see it
    assert found(onprem([rack(count=2)], row={"cooling": {"crah_kw": [5, 5]}})) == []


@pytest.mark.parametrize(("cdu", "fails"), [([120, 120], False), ([120], True)])
def test_clg004_row_liquid_n_plus_1(cdu: list[float], fails: bool) -> None:
    # 112.2 kW liquid; one 120 kW CDU leaves 0 with the largest out
    assert found(gb200({"kind": "liquid", "liquid_kw": 120}, cdu=cdu)) == (["CLG-004"] if fails else [])


@pytest.mark.parametrize(("site", "fails"), [({"max_inlet_c": 30}, False), ({"max_inlet_c": 31}, True),
                                             ({"inlet_class": "A1"}, True)])
def test_clg005_inlet_class(site: dict, fails: bool) -> None:
    # DGX H100 is rated to 30 °C inlet; ASHRAE A1 allows up to 32 °C
    data = onprem([rack(count=2)], **{"max_inlet_c": None, **site})
    data["site"] = {k: v for k, v in data["site"].items() if v is not None}
    assert found(data) == (["CLG-005"] if fails else [])


@pytest.mark.parametrize(("water", "fails"), [("W32", False), ("W40", False), ("W45", True)])
def test_clg006_water_class(water: str, fails: bool) -> None:
    # GB200 NVL72 takes supply water up to 40 °C
    assert found(gb200({"kind": "liquid", "liquid_kw": 120}, facility_water_class=water)) == (
        ["CLG-006"] if fails else [])


@pytest.mark.parametrize(("cfm", "warns"), [(3300, False), (3000, True)])
def test_clg007_airflow(cfm: float, warns: bool) -> None:
    # 3.16 × 20,400 W / 20 °F = 3,223 CFM
    data = onprem([rack(count=2, cooling={"kind": "air", "delivered_cfm": cfm})])
    assert ("CLG-007" in found(data, level="warning")) is warns and found(data) == []
