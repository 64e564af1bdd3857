"""Power judged per credible single failure (PWR-002, PWR-006): distributed-redundant rings, N+1 of 4, a block-
redundant catcher, single-corded loads and 2N, each with the figures worked out here.

A GB300 NVL72 draws 142 kW (catalog). Usable = V · I · √3 · 0.8 for three-phase circuits: 480 V 3φ 400 A →
266.0 kW; 300 A → 199.5 kW; 250 A → 166.3 kW; 600 A → 399.1 kW; 650 A → 432.3 kW; 450 A → 299.3 kW; 380 A → 252.7 kW;
200 A → 133.0 kW; 150 A → 99.8 kW; 100 A → 66.5 kW. A rack's load splits evenly over its live cords.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from clusterforge.model import Feed, Site
from clusterforge.physics import Electrical
from clusterforge.physics.failures import NORMAL, rack_cases, worst_cases
from clusterforge.physics.power_grid import Cord, Grid, grid
from tests.policies.builders import evaluate_data, feed, onprem, rack

NVL72_KW = 142.0


def usable(volts: float, amps: float) -> float:
    return volts * amps * math.sqrt(3) * 0.8 / 1000


def test_the_worked_ratings() -> None:
    assert round(usable(480, 400), 1) == 266.0
    assert round(usable(480, 300), 1) == 199.5


def nvl72(name: str, *cords: tuple[str | None, str], amps: float = 250) -> dict:
    """A GB300 NVL72 rack whose cords (panel, side) are 480 V 3φ `amps` A each (250 A: 166.3 kW, one carries it)."""
    return {"name": name, "u_height": 48, "max_weight_kg": 1800, "tare_weight_kg": 0, "footprint_m2": 1.2,
            "reserved_u": 2, "cooling": {"kind": "liquid", "liquid_kw": 130, "air_kw": 30},
            "feeds": [feed(f"{name}-{chr(ord('a') + i)}", side, 480, amps,
                           **({"panel": panel} if panel else {})) for i, (panel, side) in enumerate(cords)],
            "devices": [{"pool": "gb300", "count": 1}]}


def panel(name: str, amps: float, **extra: Any) -> dict:
    return {"name": name, "voltage": 480, "amps": amps, "phase": 3, **extra}


def hall(racks: list[dict], panels: list[dict], sources: list[dict] | None = None,
         pools: list[dict] | None = None) -> dict:
    """A passing hall around the racks: liquid and air plant to spare, a Q3400 fabric in its own network row."""
    count = sum(1 for r in racks for d in r["devices"] if d["pool"] == "gb300")
    data = onprem(racks, pools=[{"name": "gb300", "hardware": "gb300-nvl72", "count": count, "role": "compute",
                                 "partition": "train"}, *(pools or [])],
                  row={"cooling": {"crah_kw": [400, 400], "cdu_kw": [1500, 1500]}}, panels=panels,
                  **({"power_sources": sources} if sources else {}))
    data["fabric"] = {"kind": "infiniband", "switch": "q3400"}
    return data


def ring(amps: float) -> dict:
    """Three NVL72 on three panels, each rack's cords on two of them: r1 on p1/p2, r2 on p2/p3, r3 on p3/p1."""
    racks = [nvl72("r1", ("p1", "A"), ("p2", "B")), nvl72("r2", ("p2", "A"), ("p3", "B")),
             nvl72("r3", ("p3", "A"), ("p1", "B"))]
    return hall(racks, [panel(f"p{i}", amps) for i in (1, 2, 3)])


def errors(data: dict, *ids: str) -> list[tuple[str, str]]:
    """(rule id, message) of each error finding, of the rules named (all when none)."""
    return [(f.id, f.message) for f in evaluate_data(data).findings
            if f.level == "error" and (not ids or f.id in ids)]


def single_corded(amps: float) -> dict:
    """The ring plus a rack of 4 DGX H100 (40.8 kW) on one 415 V 3φ 100 A cord on p2: when p1 is lost p2 carries
    213 + 40.8 = 253.8 kW; the single-corded load drops with p2 and never moves."""
    data = ring(amps)
    single = rack("s01", count=4, feeds=[feed("s01-a", "A", amps=100, panel="p2")],
                  cooling={"kind": "rdhx", "air_kw": 60})
    data["site"]["rows"][0]["racks"].append(single)
    data["pools"].append({"name": "gpu", "hardware": "dgx-h100", "count": 4, "partition": "train"})
    data["slurm"]["partitions"][0]["pools"].append("gpu")
    return data


def n_plus_one_of_4(panel_amps: float, ups_kw: float, declared: bool = True) -> dict:
    """Distributed redundant, N+1 of 4: four UPS, each feeding one panel, six NVL72 on the six pairs of panels
    (A cord on the lower-numbered). Normal: three cords of 71 kW a panel = 213 kW; with one panel (or its UPS)
    lost each survivor takes one rack whole: 142 + 71 + 71 = 284 kW. Without `fed_by` the A/B labels stand for
    two paths: losing side B puts the three racks whose A cord is on p1 on it whole (426 kW), and losing side A
    the three whose B cord is on p4 on p4."""
    pairs = [(i, j) for i in range(1, 5) for j in range(i + 1, 5)]
    racks = [nvl72(f"r{i}{j}", (f"p{i}", "A"), (f"p{j}", "B")) for i, j in pairs]
    panels = [panel(f"p{i}", panel_amps, **({"fed_by": [f"ups-{i}"]} if declared else {})) for i in range(1, 5)]
    sources = [{"name": f"ups-{i}", "kw": ups_kw} for i in range(1, 5)] if declared else None
    return hall(racks, panels, sources)


def catcher(catcher_kw: float) -> dict:
    """Block redundant with a catcher: three UPS blocks, each feeding one 600 A panel (399.1 kW), and ups-c
    picking up any one block whose UPS is lost. Four NVL72: r1 on p1/p2, r2 on p2/p3, r3 on p3/p1, r4 on p2/p3.
    Blocks: p1 = 71 + 71 = 142 kW, p2 and p3 = 3 × 71 = 213 kW: the catcher must carry 213 kW."""
    racks = [nvl72("r1", ("p1", "A"), ("p2", "B")), nvl72("r2", ("p2", "A"), ("p3", "B")),
             nvl72("r3", ("p3", "A"), ("p1", "B")), nvl72("r4", ("p2", "A"), ("p3", "B"))]
    panels = [panel(f"p{i}", 600, fed_by=[f"ups-{i}"], catcher="ups-c") for i in (1, 2, 3)]
    sources = [*({"name": f"ups-{i}", "kw": 400} for i in (1, 2, 3)), {"name": "ups-c", "kw": catcher_kw}]
    return hall(racks, panels, sources)


def crossed(panel_amps: float) -> dict:
    """Panel p holds r1's A cord and r2's B cord; their other cords name no panel. Normal operation: 71 + 71 =
    142 kW; losing side B puts r1 whole on p and takes r2's B cord out: 142 kW again (side A the same way). The old
    sum of both racks whole said 284."""
    return hall([nvl72("r1", ("p", "A"), (None, "B")), nvl72("r2", (None, "A"), ("p", "B"))],
                [panel("p", panel_amps)])


def two_n(panel_amps: float) -> dict:
    """2N: three NVL72, every A cord on pa, every B cord on pb. Losing pb puts all three on pa: 426 kW."""
    return hall([nvl72(f"r{i}", ("pa", "A"), ("pb", "B")) for i in (1, 2, 3)],
                [panel("pa", panel_amps), panel("pb", panel_amps)])


def n_plus_one_cords(amps: float, declared: bool = True) -> dict:
    """One NVL72 with three cords on three UPS-fed panels (A, A, B): losing any one leaves two."""
    r = nvl72("r1", ("p1", "A"), ("p2", "A"), ("p3", "B"), amps=amps)
    panels = [panel(f"p{i}", 400, **({"fed_by": [f"ups-{i}"]} if declared else {})) for i in (1, 2, 3)]
    return hall([r], panels, [{"name": f"ups-{i}"} for i in (1, 2, 3)] if declared else None)


CASES: list[tuple[str, dict, list[tuple[str, str]]]] = [
    ("ring on 400 A panels passes", ring(400), []),
    ("ring on 300 A panels", ring(300), [
        ("PWR-006", "panel p1 carries 213.0 kW of 199.5 kW usable when panel p2 is lost (480 V 3φ 300 A × 0.8)"),
        ("PWR-006", "panel p2 carries 213.0 kW of 199.5 kW usable when panel p1 is lost (480 V 3φ 300 A × 0.8)"),
        ("PWR-006", "panel p3 carries 213.0 kW of 199.5 kW usable when panel p1 is lost (480 V 3φ 300 A × 0.8)"),
    ]),
    ("2N on 650 A panels passes", two_n(650), []),  # 426 kW ≤ 432.3
    ("2N on 600 A panels", two_n(600), [
        ("PWR-006", "panel pa carries 426.0 kW of 399.1 kW usable when panel pb is lost (480 V 3φ 600 A × 0.8)"),
        ("PWR-006", "panel pb carries 426.0 kW of 399.1 kW usable when panel pa is lost (480 V 3φ 600 A × 0.8)"),
    ]),
    ("crossed panel at 142 kW passes on 250 A", crossed(250), []),  # 166.3 kW usable, under the old 284
    ("crossed panel on 200 A", crossed(200), [
        ("PWR-006", "panel p carries 142.0 kW of 133.0 kW usable in normal operation (480 V 3φ 200 A × 0.8)"),
    ]),
    ("single-corded rack on 400 A ring", single_corded(400), [
        ("PWR-002", "rack s01 has no B-side feed: losing its only side drops 40.8 kW"),
    ]),
    ("single-corded rack on 380 A ring", single_corded(380), [
        ("PWR-002", "rack s01 has no B-side feed: losing its only side drops 40.8 kW"),
        ("PWR-006", "panel p2 carries 253.8 kW of 252.7 kW usable when panel p1 is lost (480 V 3φ 380 A × 0.8)"),
    ]),
    ("N+1 of 4 on 450 A panels and 300 kW UPS passes", n_plus_one_of_4(450, 300), []),
    ("N+1 of 4 on 400 A panels", n_plus_one_of_4(400, 300), [
        ("PWR-006", f"panel p{i} carries 284.0 kW of 266.0 kW usable when panel p{1 if i > 1 else 2} is lost "
                    "(480 V 3φ 400 A × 0.8)") for i in (1, 2, 3, 4)]),
    ("N+1 of 4 on 280 kW UPS", n_plus_one_of_4(450, 280), [
        ("PWR-006", f"UPS ups-{i} carries 284.0 kW of 280.0 kW rated when panel p{1 if i > 1 else 2} is lost")
        for i in (1, 2, 3, 4)]),
    ("N+1 of 4 without fed_by: a side is one path", n_plus_one_of_4(450, 300, declared=False), [
        ("PWR-006", "panel p1 carries 426.0 kW of 299.3 kW usable when side B is lost (480 V 3φ 450 A × 0.8)"),
        ("PWR-006", "panel p4 carries 426.0 kW of 299.3 kW usable when side A is lost (480 V 3φ 450 A × 0.8)")]),
    ("catcher of 250 kW carries the largest block", catcher(250), []),
    ("catcher of 200 kW", catcher(200), [
        ("PWR-006", "UPS ups-c carries 213.0 kW of 200.0 kW rated when UPS ups-2 is lost")]),
    ("N+1 cords of 150 A pass", n_plus_one_cords(150), []),  # two cords left: 199.5 kW ≥ 142
    ("N+1 cords of 100 A", n_plus_one_cords(100), [  # two left: 133.0 kW < 142
        ("PWR-002", "rack r1 draws 142.0 kW; either side alone must carry it but side A gives 133.0 kW usable "
                    "(480 V 3φ 100 A, 480 V 3φ 100 A × 0.8)")]),
    ("N+1 cords of 150 A without fed_by: side A takes two", n_plus_one_cords(150, declared=False), [
        ("PWR-002", "rack r1 draws 142.0 kW; either side alone must carry it but side B gives 99.8 kW usable "
                    "(480 V 3φ 150 A × 0.8)")]),
    ("both cords on one panel", hall([nvl72("r1", ("p1", "A"), ("p1", "B"))], [panel("p1", 400)]), [
        ("PWR-002", "rack r1 loses all 2 feeds when panel p1 is lost: 142.0 kW dropped")]),
]


@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_power_per_credible_failure(data: dict, expected: list[tuple[str, str]]) -> None:
    assert sorted(errors(data)) == sorted(expected)


def test_the_ring_names_the_worst_failure_of_every_panel_with_its_figures() -> None:
    findings = [f for f in evaluate_data(ring(300)).findings if f.id == "PWR-006"]
    assert [(f.path, round(f.measured or 0, 1), round(f.limit or 0, 1)) for f in findings] == [
        (f"site.panels[{i}]", 213.0, 199.5) for i in range(3)]


def _grid(panels: list[dict], sources: list[dict]) -> Grid:
    site = Site.model_validate({"name": "s", "rows": [], "panels": panels, "power_sources": sources})
    return grid(site, Electrical())


def _cords(g: Grid, *cords: tuple[str, str]) -> tuple[Cord, ...]:
    return tuple(g.cord(Feed.model_validate(feed(f"f{i}", side, 480, 100, panel=where)))
                 for i, (where, side) in enumerate(cords))


def test_a_lost_utility_takes_its_ups_and_panel_with_it() -> None:
    # u1 → ups-1 → p1 and u2 → ups-2 → p2; a 100 kW rack on p1/p2: losing u1 leaves p2, ups-2 and u2 carrying 100
    g = _grid([panel("p1", 400, fed_by=["ups-1"]), panel("p2", 400, fed_by=["ups-2"])],
              [{"name": "ups-1", "fed_by": ["u1"]}, {"name": "ups-2", "fed_by": ["u2"]},
               {"name": "u1", "kind": "utility"}, {"name": "u2", "kind": "utility"}])
    u1 = g.index["u1"]
    assert g.dead(u1) == {u1, g.index["ups-1"], g.index["p1"]}
    cords = _cords(g, ("p1", "A"), ("p2", "B"))
    assert [c.side for c in cords] == [-1, -1]  # the panels declare what feeds them: their A/B labels are no path
    worst = worst_cases(g, [(100.0, cords)])
    assert [(g.names[i], round(c.kw, 1), g.labels[c.lost]) for i, c in enumerate(worst)] == [
        ("p1", 100.0, "panel p2"), ("p2", 100.0, "panel p1"), ("ups-1", 100.0, "panel p2"),
        ("ups-2", 100.0, "panel p1"), ("u1", 100.0, "panel p2"), ("u2", 100.0, "panel p1")]
    assert rack_cases(g, cords) == [(g.index["p1"], (1,)), (g.index["p2"], (0,)), (g.index["ups-1"], (1,)),
                                    (g.index["ups-2"], (0,)), (u1, (1,)), (g.index["u2"], (0,))]


def test_a_panel_fed_by_two_sources_splits_its_load_and_survives_either() -> None:
    # p1 fed by ups-1 and ups-2 (a transfer switch): a single-corded 100 kW rack puts 50 kW on each in normal
    # operation and 100 kW on the one left; only p1 itself takes the rack out
    g = _grid([panel("p1", 400, fed_by=["ups-1", "ups-2"])], [{"name": "ups-1"}, {"name": "ups-2"}])
    cords = _cords(g, ("p1", "A"))
    worst = worst_cases(g, [(100.0, cords)])
    assert [(round(c.kw, 1), g.labels[c.lost] if c.lost != NORMAL else None) for c in worst] == [
        (100.0, None), (100.0, "UPS ups-2"), (100.0, "UPS ups-1")]
    assert rack_cases(g, cords) == [(g.index["p1"], ())]


def test_a_side_lost_as_the_worst_case_says_how_to_declare_the_paths() -> None:
    [hint, *_] = [f.hint for f in evaluate_data(n_plus_one_of_4(450, 300, declared=False)).findings
                  if f.id == "PWR-006"]
    assert "side B stands for the path of every B cord on a panel without fed_by" in hint
