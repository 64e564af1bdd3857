"""Ethernet AI-fabric switches in the catalog, and the fabric's switches racked like any device (issue 17).

Figures: a QM9700 is 1U, 1.72 kW, 14.5 kg; a DGX H100 8U, 10.2 kW, 130.45 kg with 8 × 400G NICs. The `rack()`
builder is 42U with 2U reserved, 415 V 3φ 60 A A/B (34.5 kW a side) and a 50 kW door. 32 DGX = 256 endpoints =
8 leaves + 4 spines at 1:1 (12 switches, 20.64 kW).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

import clusterforge.plan.switches as switches_module
from clusterforge.catalog import Switch
from clusterforge.physics import Assumptions
from clusterforge.plan import Plan
from clusterforge.plan.capacity import rack_limits, site_limits
from clusterforge.plan.elevation import switch_positions
from clusterforge.plan.model import PlacedSwitches
from clusterforge.plan.switches import first_fit, level
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES
from tests.plan_builders import big_rack, feed, load, onprem, plan_of, rack, site
from tests.policies.builders import config, design, evaluate_data, found

# --- the catalog ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["sn5600", "arista-7060x6-64pe"])
def test_ethernet_switches_split_800g_ports_into_400g(key: str) -> None:
    switch = load_catalog().of(key, Switch)
    assert (switch.ports, switch.port_speed_gbps, switch.split_ports, switch.split_speed_gbps) == (64, 800, 128, 400)
    for figure in ("u_height", "weight_kg", "max_power_kw", "depth_mm", "airflow"):  # no primary source: [U]
        assert switch.sources[figure].startswith("[U]"), figure


def test_sn5600_figures_as_the_reference_gives_them() -> None:
    sn5600 = load_catalog().of("sn5600", Switch)
    assert (sn5600.u_height, sn5600.weight_kg, sn5600.max_power_kw) == (2, 23.5, 3.0)
    assert not sn5600.sources["ports"].startswith("[U]")  # the SN5000 manual's "Data Interfaces" [P]


def test_catalog_cli_shows_them(cli) -> None:
    listed = cli("catalog", "list", "--kind", "switch").output
    assert "sn5600" in listed and "arista-7060x6-64pe" in listed and "64x 800G or 128x 400G" in listed
    shown = cli("catalog", "show", "sn5600")
    assert shown.exit_code == 0 and "SN5000 user manual" in shown.output and "planning figure" in shown.output


@pytest.mark.parametrize(("key", "kind"), [("sn5600", "ethernet"), ("arista-7060x6-64pe", "roce")])
@pytest.mark.parametrize(("nodes", "tiers"), [(1024, 2), (1025, 3)])
def test_400g_nics_use_the_split_ports(key: str, kind: str, nodes: int, tiers: int) -> None:
    # 8 × 400G per DGX: radix 128, so two tiers carry 128²/2 = 8,192 endpoints (1,024 nodes), not 2,048
    data = design([{"name": "gpu", "hardware": "dgx-h100", "count": nodes, "partition": "train"}],
                  fabric={"kind": kind, "switch": key})
    tree = plan_of(data).fabric
    assert tree is not None and (tree.radix, tree.port_speed_gbps, tree.split) == (128, 400, True)
    assert tree.tiers == tiers and (tree.capacity == 8192 if tiers == 2 else True)
    assert found(data) == []  # NET-007: a 400G NIC on a 400G (split) port


# --- where the switches go ----------------------------------------------------------------------------------

def network_rack(name: str, amps: float = 32, **extra: object) -> dict:
    """42U, 2U reserved, 415 V 3φ 32 A a side (18.4 kW usable: ten QM9700), a 60 kW door."""
    data = rack(name, count=0, role="network", cooling={"kind": "rdhx", "air_kw": 60},
                feeds=[feed(f"{name}-a", "A", amps=amps), feed(f"{name}-b", "B", amps=amps)])
    return {**data, **extra}


def hall(network: list[dict], nodes: int = 32) -> dict:
    """`nodes` DGX auto-placed into five roomy compute racks (seven each by U), then the network racks."""
    data = site([big_rack(f"a0{i}") for i in range(1, 6)], nodes)
    data["site"]["rows"].append({"name": "n", "racks": network})
    return data


def switches_per_rack(plan: Plan) -> dict[str, list[tuple[str, int]]]:
    return {r.name: [(s.tier, s.count) for s in r.switches] for r in plan.racks if r.switches}


def test_network_racks_take_the_switches_in_order() -> None:
    # n01's 18.4 kW takes ten (17.2 kW, an eleventh is 18.92); the last two spines go to n02
    plan = plan_of(hall([network_rack("n01"), network_rack("n02")]))
    assert switches_per_rack(plan) == {"n01": [("leaf", 8), ("spine", 2)], "n02": [("spine", 2)]}
    assert plan.switches is not None and plan.switches.where == "network" and plan.unplaced_switches == {}
    n01 = next(load for load in plan.loads if load.rack.name == "n01")
    assert (n01.u_used, round(n01.power_kw, 2), n01.weight_kg, round(n01.air_heat_kw, 2)) == (10, 17.2, 145, 17.2)
    assert n01.device_count == 10 and not any(d.pool == "gpu" for d in n01.rack.devices)


def test_pools_never_go_into_network_racks() -> None:
    data = site([network_rack("n01", amps=300)], 1)
    plan = plan_of(data)
    assert plan.unplaced == {"gpu": 1} and plan.racks[0].devices == ()


def test_rules_see_the_switches_load() -> None:
    # 17.2 kW of switches in n01 is 93 % of what one side carries: PWR-002 warns on the network rack
    verdict = evaluate_data(hall([network_rack("n01"), network_rack("n02")]))
    warned = [f.path for f in verdict.findings if f.id == "PWR-002"]
    assert warned == ["site.rows[1].racks[0].feeds"] and not verdict.failed


def test_switches_that_fit_nowhere_are_reported() -> None:
    data = hall([network_rack("n01")])
    plan = plan_of(data)
    assert plan.unplaced_switches == {"spine": 2}
    [finding] = [f for f in evaluate_data(data).findings if f.id == "RCK-007"]
    assert finding.level == "warning" and finding.path == "fabric.switch"
    assert finding.message.startswith("2 of the fabric's 12 qm9700 switches (2 spine) fit in no rack of the racks "
                                      "marked role: network")
    assert found(data, config=config(**{"RCK-007": {"level": "error"}})) == ["RCK-007"]


def test_only_racks_with_the_switches_airflow() -> None:
    plan = plan_of(hall([network_rack("n01", airflow="rear-to-front")]))
    assert plan.unplaced_switches == {"leaf": 8, "spine": 4} and switches_per_rack(plan) == {}


def compute_site(counts: list[int], **fabric: object) -> dict:
    """Racks of the `rack()` builder with `counts` DGX placed by hand, and no network rack."""
    data = onprem([rack(f"a0{i}", count=n) for i, n in enumerate(counts, 1)], network=False)
    data["fabric"].update(fabric)
    return data


def test_without_network_racks_the_room_is_levelled() -> None:
    # 7 DGX = 56 endpoints; three tiers forced: 2 leaves, 2 spines, 1 core. a01 (3 DGX) has room for 2 by power,
    # a02 and a03 (2 DGX) for 8 each: levelled from the top, 3 and 2 go there and a01 keeps its headroom
    plan = plan_of(compute_site([3, 2, 2], tiers=3))
    assert switches_per_rack(plan) == {"a02": [("leaf", 2), ("spine", 1)], "a03": [("spine", 1), ("core", 1)]}
    assert plan.switches is not None and plan.switches.where == "compute"
    assert found(compute_site([3, 2, 2], tiers=3), level="warning") == ["PWR-003"]  # no rack pushed past 90 %


def test_an_empty_rack_becomes_the_network_rack() -> None:
    plan = plan_of(compute_site([3, 2, 2, 0], tiers=3))
    assert switches_per_rack(plan) == {"a04": [("leaf", 2), ("spine", 2), ("core", 1)]}


def test_nodes_do_not_move_for_the_switches() -> None:
    with_fabric = plan_of(compute_site([3, 2, 2], tiers=3))
    data = compute_site([3, 2, 2])
    del data["fabric"]
    assert [p.runs for p in with_fabric.nodes] == [p.runs for p in plan_of(data).nodes]


@pytest.mark.parametrize(("fits", "count", "shares"), [
    ([2, 8, 8], 5, [0, 3, 2]),
    ([2, 8, 8, 20], 5, [0, 0, 0, 5]),
    ([3, 3, 3], 4, [2, 1, 1]),
    ([1, 1], 5, [1, 1]),
    ([], 3, []),
])
def test_level(fits: list[int], count: int, shares: list[int]) -> None:
    assert level(fits, count) == shares


def test_first_fit() -> None:
    assert first_fit([2, 8, 8], 5) == [2, 3, 0]


def test_placement_works_on_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,048 DGX need 512 leaves, 512 spines and 256 cores: 1,280 switches into 70 network racks of 20 (34.5 kW
    each). The planner asks how many fit a few times per rack, never once per switch."""
    calls = []
    real = switches_module.fit

    def counted(*args: object) -> int:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(switches_module, "fit", counted)
    data = site([big_rack("a01")], 2048)
    data["site"]["rows"].append({"name": "n", "racks": [network_rack(f"n{i:02d}", amps=60) for i in range(70)]})
    plan = plan_of(data)
    assert plan.switches is not None and sum(plan.switches.placed.values()) == 1280
    assert plan.unplaced_switches == {} and plan.switches.racks_used == 64
    assert len(calls) <= 3 * 70


# --- where they stand in the rack, and the views ------------------------------------------------------------

def test_switches_stack_down_from_below_the_reserved_u() -> None:
    plan = plan_of(compute_site([3, 2, 2], tiers=3))
    a02 = plan.racks[1]
    assert switch_positions(a02, {"gpu": 8}, 42, 2, {"qm9700": 1}) == ((40, 39), (38,))


def test_switches_fill_the_highest_free_run_first() -> None:
    # a device placed by hand at U33-U40 leaves U17-U32 free: two 2U switches at U31 and U29
    data = onprem([rack("a01", count=0, devices=[{"pool": "gpu", "count": 2}, {"pool": "gpu", "count": 1,
                                                                                "position": 33}])],
                  network=False)
    data["pools"][0]["count"] = 3
    plan = plan_of(data)
    racked = replace(plan.racks[0], switches=(PlacedSwitches("leaf", 2, "sn5600"),))
    assert switch_positions(racked, {"gpu": 8}, 42, 2, {"sn5600": 2}) == ((31, 29),)


def test_plan_cli_lists_the_racked_switches(cli, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole table rows and lines, as matched below
    text = cli("plan", EXAMPLES / "onprem-dgx-h100.yaml").output
    assert "gpu ×2, leaf ×3 (qm9700)" in text
    assert "switches racked: leaf 4, spine 2 into 2 rack(s)" in text
    data = json.loads(cli("plan", EXAMPLES / "onprem-dgx-h100.yaml", "-f", "json").stdout)
    assert data["switches"] == {"where": "compute", "placed": {"leaf": 4, "spine": 2}, "unplaced": {},
                                "racks_used": 2}
    racks = {r["name"]: r for r in data["racks"]}
    assert racks["b02"]["switches"] == [{"tier": "leaf", "count": 3, "switch": "qm9700"}]
    assert racks["b02"]["used"]["u"] == 16 + 3


def test_plan_cli_reports_unplaced_switches(cli, write) -> None:
    path = write(yaml.safe_dump(hall([network_rack("n01")]), sort_keys=False))
    result = cli("plan", path)
    assert "unplaced switches: spine 2 fit in no rack (RCK-007)" in result.output
    assert result.exit_code == 0  # a warning: the site may keep its network in racks it does not describe


def test_report_draws_the_switches(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", EXAMPLES / "onprem-dgx-h100.yaml", "-o", out).exit_code == 0
    html = out.read_text()
    assert html.count('<g class="device switch">') == 6
    assert "leaf · qm9700 switch at U40" in html and "fabric switch</span>" in html
    assert "6 qm9700 switches racked in the room the pools leave." in html


def test_report_says_what_fits_nowhere(cli, write, tmp_path: Path) -> None:
    path = write(yaml.safe_dump(hall([network_rack("n01")]), sort_keys=False))
    out = tmp_path / "r.html"
    assert cli("report", path, "-o", out).exit_code == 0
    html = out.read_text()
    assert html.count('<g class="device switch">') == 10 and "2 spine switches fit in no rack" in html


def test_a_site_rack_role_is_validated(cli, write) -> None:
    data = hall([network_rack("n01")])
    data["site"]["rows"][1]["racks"][0]["role"] = "storage"
    result = cli("check", write(yaml.safe_dump(data, sort_keys=False)))
    assert result.exit_code == 2 and "site.rows[1].racks[0].role" in result.output


def test_examples_keep_their_verdicts(cli) -> None:
    """The switches the examples gain in their racks push no rack past a warning threshold."""
    for example in ("onprem-dgx-h100.yaml", "onprem-dgx-h100-hall.yaml"):
        data = json.loads(cli("check", EXAMPLES / example, "-f", "json").stdout)
        assert data["verdict"] == "pass"
        # COST-003: the hall's cpu-1u controllers have no price (a cost finding, not a rack's)
        racks = {f["id"] for f in data["findings"] if f["level"] == "warning" and f["id"] != "COST-003"}
        assert racks == {"PWR-003"}, example


def test_row_cooling_turns_switches_to_the_next_row() -> None:
    """n01's own room takes 17 (30 kW of room air), but its row's CRAHs give 10 kW (N+1): 5 switches. The
    7 the row turns away go to n02 in a row with cooling to spare, and the row rule (CLG-004) agrees."""
    data = site([big_rack(f"a0{i}") for i in range(1, 6)], 32)
    data["site"]["rows"] += [
        {"name": "n1", "cooling": {"crah_kw": [10, 10]},
         "racks": [network_rack("n01", amps=60, cooling={"kind": "air"})]},
        {"name": "n2", "cooling": {"crah_kw": [100, 100]},
         "racks": [network_rack("n02", amps=60, cooling={"kind": "air"})]}]
    plan = plan_of(data)
    assert switches_per_rack(plan) == {"n01": [("leaf", 5)], "n02": [("leaf", 3), ("spine", 4)]}
    assert found(data, level=None) == ["PWR-003"]  # the DGX H100's own 4+2 PSUs; no CLG-004 on either row


def test_a_rack_scale_system_is_its_rack() -> None:
    """The GB200 row has 2U free above each NVL72 and kW to spare, but the system fills its rack: no switch goes
    there, and without the example's network rack the 14 of its fabric fit nowhere in that site."""
    data = yaml.safe_load((EXAMPLES / "onprem-gb200-nvl72-row.yaml").read_text())
    assert switches_per_rack(plan_of(data)) == {"n01": [("leaf", 9), ("spine", 5)]}
    racks = data["site"]["rows"][0]["racks"]
    racks[:] = [rack for rack in racks if rack.get("role") != "network"]
    plan = plan_of(data)
    assert switches_per_rack(plan) == {} and plan.unplaced_switches == {"leaf": 9, "spine": 5}


def test_rack_limits_once_per_kind_are_each_racks_limits() -> None:
    """`site_limits` works a hall's limits out once per kind of rack; each rack still gets its own figures."""
    racks = [rack("a01"), rack("a02", cooling={"kind": "air"}),
             rack("a03", cooling={"kind": "liquid", "liquid_kw": 80}),
             rack("a04", feeds=[feed("a04-a", "A", amps=32), feed("a04-b", "B", amps=32)]), rack("a05", reserved_u=4),
             big_rack("a06"), rack("a07"), network_rack("n01")]
    cluster = load(onprem(racks, network=False)).cluster
    assert cluster.site is not None
    limits = site_limits(cluster.site, Assumptions())
    assert list(limits) == [rack_limits(r, cluster.site, Assumptions()) for _, _, _, r in cluster.site.racks()]
    assert limits[0] is limits[6] and len({id(limit) for limit in limits}) == 7


@pytest.mark.parametrize(("from_top", "gaps"), [(True, [3, 1]), (False, [1, 3])])
def test_switches_book_the_highest_gaps_devices_the_lowest(from_top: bool, gaps: list[int]) -> None:
    """Two 2U switches in free runs of 3U (low) and 5U (high): booked from the top they take the high run, as
    `switch_positions` draws them; devices take the lowest runs first, as the elevation stacks them."""
    from clusterforge.plan.capacity import Demand
    from clusterforge.plan.packing import Room, take

    room = Room([3, 5], {"kw": 10.0, "kg": 100.0, "air_kw": 10.0, "liquid_kw": 0.0}, True, [])
    take(Demand(2, 1.0, 10.0, 1.0, 0.0), 2, room, {}, from_top=from_top)
    assert room.gaps == gaps and room.free["kw"] == 8.0 and not room.empty
