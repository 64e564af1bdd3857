"""In-rack CDUs: a rack may carry its own CDUs (`cooling: {kind: liquid, cdu_kw: [...]}`), checked N+1 for that
rack alone (CLG-004) and never counted against its row's CDUs.

GB300 NVL72: up to 142 kW per rack (NVIDIA NVL72 Enterprise RA), 0.85 of it to liquid = 120.7 kW; an in-rack
CDU of up to 250 kW with N+1 pumps is sold for it (Supermicro) [U].
"""

from __future__ import annotations

import pytest
import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from clusterforge.plan import build_plan
from clusterforge.plan.model import Plan
from tests.policies.builders import evaluate_data, feed, onprem, rack

BIG = [feed("g-a", "A", 415, 250), feed("g-b", "B", 415, 250)]  # 143.8 kW usable a side


def nvl72_rack(name: str, cooling: dict, count: int = 1) -> dict:
    return rack(name, count=count, u_height=48, max_weight_kg=2000, footprint_m2=1.2,
                feeds=[{**f, "name": f"{name}-{f['side'].lower()}"} for f in BIG], cooling=cooling)


def hall(racks: list[dict], row_cdu: list[float]) -> dict:
    count = sum(d["count"] for r in racks for d in r["devices"]) or 1
    pools = [{"name": "gpu", "hardware": "gb300-nvl72", "count": count, "partition": "train"}]
    return onprem(racks, pools=pools, row={"cooling": {"crah_kw": [200, 200], "cdu_kw": row_cdu}})


def cooling_findings(data: dict) -> list[tuple[str, str]]:
    return sorted((f.id, f.message) for f in evaluate_data(data).findings
                  if f.id.startswith("CLG") and f.level == "error")


def planned(data: dict) -> Plan:
    loaded = load_text(yaml.safe_dump(data, sort_keys=False), "bp.yaml")
    return build_plan(loaded.cluster, loaded.catalog)


def test_nvl72_with_two_in_rack_cdus_passes() -> None:
    # 120.7 kW of liquid heat on 2 x 250 kW in the rack: 250 kW with one out; the row has no CDU at all
    assert cooling_findings(hall([nvl72_rack("g01", {"kind": "liquid", "cdu_kw": [250, 250]})], [])) == []


def test_nvl72_with_one_in_rack_cdu_has_no_n_plus_1() -> None:
    [(rule, message)] = cooling_findings(hall([nvl72_rack("g01", {"kind": "liquid", "cdu_kw": [250]})], []))
    assert rule == "CLG-004"
    assert message.startswith("rack g01 puts 120.7 kW of heat on its in-rack liquid (CDU) plant")


def test_one_in_rack_cdu_with_a_spare_pump_passes() -> None:
    # the published design: one 250 kW in-rack CDU with N+1 pumps; a pump failure leaves the 250 kW, so the
    # rack's 120.7 kW holds with one part out
    cooling = {"kind": "liquid", "cdu_kw": [250], "cdu_pumps": "n+1"}
    assert cooling_findings(hall([nvl72_rack("g01", cooling)], [])) == []
    # a spare pump does not make a unit larger than it is
    small = {"kind": "liquid", "cdu_kw": [110], "cdu_pumps": "n+1"}
    [(rule, message)] = cooling_findings(hall([nvl72_rack("g01", small)], []))
    assert rule == "CLG-004" and "110 kW with a spare pump each" in message


def test_the_planner_counts_a_spare_pump_as_the_rule_does() -> None:
    racks = [nvl72_rack("g01", {"kind": "liquid", "cdu_kw": [250], "cdu_pumps": "n+1"}, count=0)]
    data = hall(racks, [])
    plan = planned(data)
    assert not plan.unplaced and sum(len(r.devices) for r in plan.racks) == 1


def test_row_cdus_are_unaffected_by_a_rack_with_its_own() -> None:
    # the row's 2 x 130 kW CDUs (130 kW N+1) carry the second rack's 120.7 kW; the first rack's own CDUs carry it
    own = nvl72_rack("g01", {"kind": "liquid", "cdu_kw": [250, 250]})
    shared = nvl72_rack("g02", {"kind": "liquid", "liquid_kw": 130})
    assert cooling_findings(hall([own, shared], [130, 130])) == []
    # without its own CDUs, both racks' 241.4 kW land on the row's 130 kW
    own_less = nvl72_rack("g01", {"kind": "liquid", "liquid_kw": 130})
    assert [r for r, _ in cooling_findings(hall([own_less, shared], [130, 130]))] == ["CLG-004"]


def test_a_stated_loop_still_bounds_a_rack_with_its_own_cdus() -> None:
    cooling = {"kind": "liquid", "cdu_kw": [250, 250], "liquid_kw": 100}
    assert [r for r, _ in cooling_findings(hall([nvl72_rack("g01", cooling)], []))] == ["CLG-003"]


def test_the_planner_places_into_racks_with_their_own_cdus() -> None:
    racks = [nvl72_rack(f"g0{i}", {"kind": "liquid", "cdu_kw": [250, 250]}, count=0) for i in (1, 2)]
    data = hall(racks, [])
    data["pools"][0]["count"] = 2
    plan = planned(data)
    assert not plan.unplaced and sum(len(r.devices) for r in plan.racks) == 2
    assert cooling_findings(data) == []


def test_the_planner_keeps_n_plus_1_of_in_rack_cdus() -> None:
    racks = [nvl72_rack("g01", {"kind": "liquid", "cdu_kw": [250]}, count=0)]
    data = hall(racks, [])
    plan = planned(data)
    assert plan.unplaced == {"gpu": 1}


@pytest.mark.parametrize("cooling", [{"kind": "liquid"}, {"kind": "liquid", "cdu_kw": []}])
def test_a_liquid_rack_states_a_loop_or_cdus(cooling: dict) -> None:
    data = hall([nvl72_rack("g01", cooling)], [])
    with pytest.raises(ClusterforgeError, match=r"liquid_kw|cdu_kw"):
        load_text(yaml.safe_dump(data, sort_keys=False), "bp.yaml")
