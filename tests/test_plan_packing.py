"""Auto-placement: pools without explicit placements go into the site's racks within every rack limit.

A DGX H100 is 8U, 10.2 kW, 130.45 kg, air-cooled. Each test starts from racks where nothing binds
(`big_rack`) and lowers exactly one figure, so the count per rack shows that this limit is the one obeyed.
"""

from __future__ import annotations

import pytest
import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.physics import Cooling, Electrical
from clusterforge.plan import build_plan
from clusterforge.policies.config import PolicyConfig
from clusterforge.target_kernel import load_catalog
from tests.plan_builders import big_rack, feed, onprem, per_rack, plan_of, rack, site, unplaced_pool
from tests.policies.builders import found


def test_nothing_binds_but_count() -> None:
    plan = plan_of(site([big_rack("a01")], 6))
    assert per_rack(plan) == [6]
    assert plan.unplaced == {}


def test_u_space_binds() -> None:
    # 40U usable (42 − 2 reserved) holds five 8U DGX
    plan = plan_of(site([big_rack(f"a0{i}", u_height=42, reserved_u=2) for i in (1, 2, 3)], 12))
    assert per_rack(plan) == [5, 5, 2]
    assert plan.placement is not None and plan.placement.bounds["u"] == 3


def test_ab_power_binds_on_the_weaker_side() -> None:
    # side A 415 V 3φ 60 A = 34.5 kW, side B 40 A = 23.0 kW: either side alone must carry the rack → 2 DGX
    feeds = [feed("a01-a", "A", amps=60), feed("a01-b", "B", amps=40)]
    plan = plan_of(site([big_rack("a01", feeds=feeds)], 4))
    assert per_rack(plan) == [2]
    assert plan.unplaced == {"gpu": 2}


def test_ab_power_is_not_the_sum_of_sides() -> None:
    # 34.5 kW per side: three DGX (30.6 kW), not the six that 69 kW of A+B would suggest
    plan = plan_of(site([big_rack("a01", feeds=[feed("a01-a", "A"), feed("a01-b", "B")])], 6))
    assert per_rack(plan) == [3]


def test_a_rack_without_b_side_takes_nothing() -> None:
    plan = plan_of(site([big_rack("a01", feeds=[feed("a01-a", "A", amps=300)])], 1))
    assert per_rack(plan) == [0]
    assert plan.unplaced == {"gpu": 1}


def test_derating_comes_from_the_policy_config() -> None:
    # at 100 % instead of 80 %, 415 V 3φ 60 A gives 43.1 kW: four DGX (40.8 kW)
    feeds = [feed("a01-a", "A"), feed("a01-b", "B")]
    plan = plan_of(site([big_rack("a01", feeds=feeds)], 6), PolicyConfig(electrical=Electrical(derate=1.0)))
    assert per_rack(plan) == [4]


def test_weight_binds() -> None:
    # 500 kg rating − 150 kg tare = 350 kg: two DGX (260.9 kg), not three (391.4 kg)
    plan = plan_of(site([big_rack("a01", max_weight_kg=500)], 3))
    assert per_rack(plan) == [2]


def test_floor_load_binds() -> None:
    # 600 kg/m² × 0.72 m² = 432 kg − 150 kg tare = 282 kg: two DGX
    plan = plan_of(site([big_rack("a01")], 3, floor_load_kg_per_m2=600))
    assert per_rack(plan) == [2]


def test_air_cooling_capacity_binds() -> None:
    # a 25 kW rear door: two DGX (20.4 kW)
    plan = plan_of(site([big_rack("a01", cooling={"kind": "rdhx", "air_kw": 25})], 3))
    assert per_rack(plan) == [2]


@pytest.mark.parametrize(("kind", "default_kw", "fits"), [("air", 30.0, 2), ("containment", 40.0, 3)])
def test_air_cooling_defaults_come_from_the_policy_config(kind: str, default_kw: float, fits: int) -> None:
    data = site([big_rack("a01", cooling={"kind": kind})], 5)
    assert per_rack(plan_of(data)) == [fits]
    # halve the configured ceiling and the count follows
    half = PolicyConfig(cooling=Cooling(air_kw=default_kw / 2, containment_kw=default_kw / 2))
    assert per_rack(plan_of(data, half)) == [int(default_kw / 2 // 10.2)]


def test_liquid_hardware_only_in_liquid_racks() -> None:
    # GB200 NVL72: 132 kW, 85 % to liquid (112.2 kW), 15 % to air (19.8 kW), a rack of its own
    liquid = big_rack("l02", u_height=48, max_weight_kg=1800, tare_weight_kg=0,
                      cooling={"kind": "liquid", "liquid_kw": 130, "air_kw": 30})
    air = big_rack("l01", max_weight_kg=3000, tare_weight_kg=0)
    plan = plan_of(site([air, liquid], [unplaced_pool(2, "gb200-nvl72", "nvl")]))
    assert per_rack(plan, "nvl") == [0, 1]
    assert plan.unplaced == {"nvl": 1}
    assert plan.placement is not None and plan.placement.bounds["pool nvl"] == 2


def test_hybrid_hardware_needs_a_liquid_rack_even_without_liquid_heat(tmp_path) -> None:
    # a site catalog's hybrid chassis that sends nothing to liquid: capacity alone would let it into air racks
    catalog = tmp_path / "site.yaml"
    catalog.write_text(yaml.safe_dump({"hardware": {"hybrid-2u": {
        "kind": "server", "description": "test chassis", "max_power_kw": 2.0, "u_height": 2, "weight_kg": 30,
        "depth_mm": 800, "cooling": "hybrid", "liquid_heat_fraction": 0.0, "psus": {"count": 2, "required": 1},
        "max_inlet_c": 35, "sources": {k: "test" for k in ("max_power_kw", "u_height", "weight_kg", "depth_mm",
                                                              "cooling", "liquid_heat_fraction", "psus",
                                                              "max_inlet_c")}}}}))
    liquid = big_rack("l02", cooling={"kind": "liquid", "liquid_kw": 50})
    data = site([big_rack("a01"), liquid], [unplaced_pool(2, "hybrid-2u", "hyb")])
    loaded = load_text(yaml.safe_dump(data), "bp.yaml", load_catalog([catalog]))
    plan = build_plan(loaded.cluster, loaded.catalog)
    assert per_rack(plan, "hyb") == [0, 2]


def test_liquid_capacity_binds() -> None:
    liquid = big_rack("l01", u_height=48, tare_weight_kg=0, cooling={"kind": "liquid", "liquid_kw": 100})
    data = site([liquid], [unplaced_pool(1, "gb200-nvl72", "nvl")])
    assert plan_of(data).unplaced == {"nvl": 1}  # 112.2 kW of liquid heat > 100 kW loop


def test_rack_scale_systems_take_an_empty_rack_each() -> None:
    def liquid(name: str, **extra: object) -> dict:
        return big_rack(name, u_height=60, tare_weight_kg=0,
                        cooling={"kind": "liquid", "liquid_kw": 400, "air_kw": 100}, **extra)

    racks = [liquid("l01", devices=[{"pool": "gpu", "count": 1}]), liquid("l02"), liquid("l03")]
    plan = plan_of(site(racks, [unplaced_pool(1), unplaced_pool(3, "gb200-nvl72", "nvl")]))
    # l01 holds an explicit DGX, so only l02 and l03 take an NVL72 (one each), though every limit of l01
    # (52U free, 172.5 kW, 3 t, 400 kW liquid) would take one more
    assert per_rack(plan, "nvl") == [0, 1, 1]
    assert plan.unplaced == {"nvl": 1}


def test_adds_to_what_is_explicitly_placed() -> None:
    # a01 already holds two DGX (20.4 of 34.5 kW): one more fits; the rest go to a02
    racks = [rack("a01", count=2, pool="gpu"), rack("a02", count=0)]
    data = onprem(racks, pools=[unplaced_pool(2), unplaced_pool(4, name="more")], network=False)
    data["slurm"]["partitions"][0]["pools"] = ["gpu", "more"]
    plan = plan_of(data)
    assert per_rack(plan, "more") == [1, 3]
    assert [d.explicit for d in plan.racks[0].devices] == [True, False]


def test_row_cooling_n_plus_one_binds() -> None:
    # CRAHs 20 + 20 + 20 kW, one held in reserve: 40 kW for the row → three DGX (30.6 kW) over two racks
    racks = [big_rack(f"a0{i}", cooling={"kind": "containment", "air_kw": 200}) for i in (1, 2)]
    data = site(racks, 6)
    data["site"]["rows"][0]["cooling"] = {"crah_kw": [20, 20, 20]}
    plan = plan_of(data)
    assert per_rack(plan) == [3, 0]
    assert plan.unplaced == {"gpu": 3}


def test_rear_doors_keep_heat_from_the_row_crahs() -> None:
    # the same row with 200 kW rear doors: the doors take the heat, the CRAHs see none of it
    data = site([big_rack("a01"), big_rack("a02")], 6)
    data["site"]["rows"][0]["cooling"] = {"crah_kw": [20, 20, 20]}
    assert per_rack(plan_of(data)) == [6, 0]


def test_heat_past_a_rear_door_reaches_the_row() -> None:
    # a01's 20 kW door under three explicit DGX (30.6 kW) passes 10.6 kW to the row's 40 kW of CRAHs
    # (CLG-001 flags a01 itself): 29.4 kW are left, two DGX for a02
    racks = [big_rack("a01", cooling={"kind": "rdhx", "air_kw": 20}, devices=[{"pool": "old", "count": 3}]),
             big_rack("a02", cooling={"kind": "containment", "air_kw": 200})]
    data = site(racks, [unplaced_pool(3, name="old"), unplaced_pool(6)])
    data["site"]["rows"][0]["cooling"] = {"crah_kw": [20, 20, 20]}
    assert per_rack(plan_of(data)) == [0, 2]


def test_row_liquid_n_plus_one_binds() -> None:
    # two NVL72 need 224.4 kW of liquid; CDUs 150 + 150 give 150 kW with one in reserve → one rack
    def liquid(name: str) -> dict:
        return big_rack(name, u_height=48, tare_weight_kg=0, cooling={"kind": "liquid", "liquid_kw": 130})

    data = site([liquid("l01"), liquid("l02")], [unplaced_pool(2, "gb200-nvl72", "nvl")])
    data["site"]["rows"][0]["cooling"] = {"cdu_kw": [150, 150]}
    assert per_rack(plan_of(data), "nvl") == [1, 0]
    data["site"]["rows"][0]["cooling"] = {}  # no CDU listed: no liquid heat at all (CLG-004)
    assert per_rack(plan_of(data), "nvl") == [0, 0]


def test_panel_binds_after_the_other_side_fails() -> None:
    # A feeds on a 415 V 3φ 50 A panel (28.8 kW usable): when B fails it carries every rack → two DGX in total
    def racked(name: str) -> dict:
        return big_rack(name, feeds=[feed(f"{name}-a", "A", amps=300, panel="pa"),
                                     feed(f"{name}-b", "B", amps=300, panel="pb")])

    data = site([racked("a01"), racked("a02")], 4)
    data["site"]["panels"] = [{"name": "pa", "voltage": 415, "amps": 50, "phase": 3},
                              {"name": "pb", "voltage": 415, "amps": 1000, "phase": 3}]
    assert per_rack(plan_of(data)) == [2, 0]


def test_unbalanced_feeds_bind_in_normal_operation() -> None:
    # side A: 60 A + 10 A feeds, side B: 100 A. Either side carries 40+ kW, but split over three feeds the
    # 10 A feed (5.75 kW) limits the rack to 17.2 kW (PWR-001): one DGX
    feeds = [feed("a01-a1", "A", amps=60), feed("a01-a2", "A", amps=10), feed("a01-b", "B", amps=100)]
    assert per_rack(plan_of(site([big_rack("a01", feeds=feeds)], 3))) == [1]


@pytest.mark.parametrize("change", [{"airflow": "rear-to-front"}, {"mounting_depth_mm": 800}])
def test_airflow_and_depth_must_suit(change: dict) -> None:
    # the DGX H100 breathes front to rear and is 897 mm deep
    assert per_rack(plan_of(site([big_rack("a01", **change), big_rack("a02")], 2))) == [0, 2]


def test_largest_pool_first() -> None:
    # listed first, the 1U servers would take a01; first-fit decreasing places the DGX there first
    racks = [big_rack("a01", u_height=42, reserved_u=2), big_rack("a02", u_height=42, reserved_u=2)]
    plan = plan_of(site(racks, [unplaced_pool(8, "cpu-1u", "svc", role="login"), unplaced_pool(5)]))
    assert per_rack(plan) == [5, 0]
    assert per_rack(plan, "svc") == [0, 8]


def test_lower_bound_and_overflow() -> None:
    # 16 DGX into 6 racks of 34.5 kW: power alone needs ⌈163.2 / 34.5⌉ = 5 racks, but 3 per rack needs 6
    racks = [rack(f"a0{i}", count=0) for i in range(1, 7)]
    plan = plan_of(onprem(racks, pools=[unplaced_pool(20)]))
    report = plan.placement
    assert report is not None
    assert report.bounds["kw"] == 6  # 204 kW / 34.5
    assert report.bounds["pool gpu"] == 7  # ⌈20 / 3⌉
    assert report.lower_bound == 7
    assert report.auto_placed == {"gpu": 18} and report.racks_used == 6
    assert plan.unplaced == {"gpu": 2}


def test_lower_bound_is_none_when_no_rack_fits() -> None:
    report = plan_of(site([big_rack("a01")], [unplaced_pool(1, "gb200-nvl72", "nvl")])).placement
    assert report is not None and report.lower_bound is None and report.bounds["pool nvl"] is None


def test_placed_devices_pass_the_policy_check() -> None:
    # what the planner places, the rules accept: a tight site filled by auto-placement has no errors
    racks = [rack(f"a0{i}", count=0, cooling={"kind": "containment", "air_kw": 40}) for i in range(1, 5)]
    data = onprem(racks, pools=[unplaced_pool(10)], panels=[{"name": "pa", "voltage": 415, "amps": 150}])
    for r in data["site"]["rows"][0]["racks"]:
        r["feeds"][0]["panel"] = "pa"
    data["site"]["rows"][0]["cooling"] = {"crah_kw": [50, 50, 50]}
    plan = plan_of(data)
    assert sum(per_rack(plan)) == 8  # panel pa: 86.3 kW usable → eight DGX (81.6 kW), under the CRAHs' 100 kW
    assert found(data) == ["RCK-008"]  # the placed eight break no rule; the two left over fit in no rack
    # one more DGX than the planner placed puts panel pa over its rating
    for r, count in zip(data["site"]["rows"][0]["racks"], (3, 3, 3, 0), strict=True):
        r["devices"] = [{"pool": "gpu", "count": count}] if count else []
    data["pools"][0]["count"] = 9
    assert found(data) == ["PWR-006"]


def test_nodes_are_numbered_in_rack_order_and_stacked_around_explicit_positions() -> None:
    # a01 (40U usable): an explicit DGX at U20-27 leaves U1-19 (two 8U DGX, not 19/8) and U28-40 (one)
    racks = [big_rack("a01", u_height=42, reserved_u=2, devices=[{"pool": "gpu", "count": 1, "position": 20}]),
             big_rack("a02", u_height=42, reserved_u=2)]
    plan = plan_of(site(racks, [unplaced_pool(1), unplaced_pool(5, name="more")]))
    more = plan.pool_nodes("more")
    assert [(r.first, r.count, r.rack, r.positions) for r in more.runs] == [
        (1, 3, "a01", (1, 9, 28)), (4, 2, "a02", (1, 9))]
    assert plan.pool_nodes("gpu").runs[0].positions == (20,)


def test_unplaced_nodes_are_numbered_last() -> None:
    plan = plan_of(site([big_rack("a01", u_height=16, reserved_u=0)], 3))
    runs = plan.pool_nodes("gpu").runs
    assert [(r.first, r.count, r.rack) for r in runs] == [(1, 2, "a01"), (3, 1, None)]


def test_without_site_nothing_is_placed() -> None:
    data = onprem([rack("a01", count=0)], pools=[unplaced_pool(4)])
    del data["site"]
    plan = plan_of(data)
    assert plan.racks == () and plan.placement is None and plan.unplaced == {}
    assert plan.pool_nodes("gpu").hostlist == "gpu-[0001-0004]"
