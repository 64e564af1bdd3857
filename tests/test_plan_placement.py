"""Auto-placement: pools without explicit placements go into the site's racks within every rack limit.

A DGX H100 is 8U, 10.2 kW, 130.45 kg, air-cooled. Each test starts from racks where nothing binds
(`big_rack`) and lowers exactly one figure, so the count per rack shows that this limit is the one obeyed.
"""

from __future__ import annotations

import pytest

from clusterforge.policies.config import Cooling, Electrical, PolicyConfig
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


def test_liquid_capacity_binds() -> None:
    liquid = big_rack("l01", u_height=48, tare_weight_kg=0, cooling={"kind": "liquid", "liquid_kw": 100})
    data = site([liquid], [unplaced_pool(1, "gb200-nvl72", "nvl")])
    assert plan_of(data).unplaced == {"nvl": 1}  # 112.2 kW of liquid heat > 100 kW loop


def test_rack_scale_systems_take_an_empty_rack_each() -> None:
    def liquid(name: str, **extra: object) -> dict:
        return big_rack(name, u_height=48, tare_weight_kg=0,
                        cooling={"kind": "liquid", "liquid_kw": 400, "air_kw": 100}, **extra)

    racks = [liquid("l01", devices=[{"pool": "gpu", "count": 1}]), liquid("l02"), liquid("l03")]
    plan = plan_of(site(racks, [unplaced_pool(1), unplaced_pool(3, "gb200-nvl72", "nvl")]))
    # l01 holds an explicit DGX, so only l02 and l03 take an NVL72 (one each, though power would allow more)
    assert per_rack(plan, "nvl") == [0, 1, 1]
    assert plan.unplaced == {"nvl": 1}


def test_adds_to_what_is_explicitly_placed() -> None:
    # a01 already holds two DGX (20.4 of 34.5 kW): one more fits; the rest go to a02
    racks = [rack("a01", count=2, pool="gpu"), rack("a02", count=0)]
    data = onprem(racks, pools=[unplaced_pool(2), unplaced_pool(4, name="more")])
    data["slurm"]["partitions"][0]["pools"] = ["gpu", "more"]
    plan = plan_of(data)
    assert per_rack(plan, "more") == [1, 3]
    assert [d.explicit for d in plan.racks[0].devices] == [True, False]


def test_row_cooling_n_plus_one_binds() -> None:
    # CRAHs 20 + 20 + 20 kW, one held in reserve: 40 kW for the row → three DGX (30.6 kW) over two racks
    data = site([big_rack("a01"), big_rack("a02")], 6)
    data["site"]["rows"][0]["cooling"] = {"crah_kw": [20, 20, 20]}
    plan = plan_of(data)
    assert per_rack(plan) == [3, 0]
    assert plan.unplaced == {"gpu": 3}


def test_panel_binds() -> None:
    # both feeds of both racks on a 415 V 3φ 50 A panel: 28.8 kW usable → two DGX in total
    data = site([big_rack(f"a0{i}", feeds=[feed(f"a0{i}-a", "A", amps=300, panel="p1"),
                                          feed(f"a0{i}-b", "B", amps=300, panel="p1")]) for i in (1, 2)], 4)
    data["site"]["panels"] = [{"name": "p1", "voltage": 415, "amps": 50, "phase": 3}]
    assert per_rack(plan_of(data)) == [2, 0]


def test_site_it_budget_binds() -> None:
    plan = plan_of(site([big_rack("a01"), big_rack("a02")], 4, contracted_it_kw=25))
    assert per_rack(plan) == [2, 0]


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
    racks = [rack(f"a0{i}", count=0) for i in range(1, 5)]
    data = onprem(racks, pools=[unplaced_pool(10)], contracted_it_kw=200)
    data["site"]["rows"][0]["cooling"] = {"crah_kw": [50, 50, 50]}
    plan = plan_of(data)
    assert sum(per_rack(plan)) == 9  # 100 kW of N+1 CRAH: nine DGX (91.8 kW)
    assert found(data) == []


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
