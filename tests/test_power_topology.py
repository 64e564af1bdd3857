"""The power topology as a reviewer meets it: `clusterforge check` on the distributed-redundant ring
(tests/fixtures/power/ring-gb300.yaml), and a topology that names what is not there refused at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError

RING = Path(__file__).parent / "fixtures" / "power" / "ring-gb300.yaml"
TEXT = RING.read_text()
PANELS = "    - {name: p1, voltage: 480, amps: 400, phase: 3}\n"


def test_the_ring_passes_check(cli) -> None:
    result = cli("check", RING)
    assert result.exit_code == 0, result.output
    assert "PWR-006" not in result.output and "PWR-002" not in result.output


def test_the_ring_on_300_a_panels_fails_naming_the_panel_and_the_element_lost(cli, write) -> None:
    result = cli("check", write(TEXT.replace("amps: 400", "amps: 300")))
    assert result.exit_code == 1
    flat = " ".join(result.output.split())
    assert "panel p2 carries 213.0 kW of 199.5 kW usable when panel p1 is lost (480 V 3φ 300 A × 0.8)" in flat


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


SOURCES = "  power_sources:\n    - {name: ups-1, kw: 500}\n    - {name: ups-c, kw: 500}\n"


@pytest.mark.parametrize(("panel", "sources", "needle", "fragment"), [
    ("{name: p1, voltage: 480, amps: 400, phase: 3, fed_by: [ups-9]}", SOURCES, "ups-9",
     "unknown power source or panel 'ups-9'"),
    ("{name: p1, voltage: 480, amps: 400, phase: 3, fed_by: [ups-1], catcher: ups-x}", SOURCES, "ups-x",
     "unknown power source or panel 'ups-x'"),
    ("{name: p1, voltage: 480, amps: 400, phase: 3, catcher: ups-c}", SOURCES, "catcher: ups-c",
     "has a catcher but no fed_by"),
    ("{name: p1, voltage: 480, amps: 400, phase: 3, fed_by: [ups-c], catcher: ups-c}", SOURCES, "catcher: ups-c",
     "is also among the sources"),
    ("{name: p1, voltage: 480, amps: 400, phase: 3, fed_by: [p1]}", SOURCES, "fed_by: [p1]", "is fed by itself"),
    ("{name: p1, voltage: 480, amps: 400, phase: 3, fed_by: [ups-1]}",
     "  power_sources:\n    - {name: ups-1, kw: 500, fed_by: [p1]}\n", "fed_by: [p1]", "power topology loops"),
    ("{name: ups-1, voltage: 480, amps: 400, phase: 3}", SOURCES, "name: ups-1, kw",
     "duplicate panel or power source name 'ups-1'"),
])
def test_a_topology_naming_what_is_not_there_is_refused_at_its_line(panel: str, sources: str, needle: str,
                                                                    fragment: str) -> None:
    text = TEXT.replace(PANELS, f"    - {panel}\n", 1).replace("  rows:\n", f"{sources}  rows:\n", 1)
    if "name: ups-1, voltage" in panel:  # the panel renamed: the cords on p1 now land on ups-1
        text = text.replace("panel: p1}", "panel: ups-1}")
    with pytest.raises(ClusterforgeError) as exc:
        load_text(text, "ring.yaml")
    matching = [p for p in exc.value.problems if fragment in p.message]
    assert matching, [p.render() for p in exc.value.problems]
    assert matching[0].line == _line(text, needle), [p.render() for p in exc.value.problems]


def test_a_cord_naming_an_unknown_panel_exits_2_at_its_line(cli, write) -> None:
    text = TEXT.replace("panel: p3}", "panel: p4}", 1)
    result = cli("check", path := write(text))
    assert result.exit_code == 2
    assert f"{path}:{_line(text, 'panel: p4')}: site.rows[0].racks[1].feeds[1].panel: unknown panel 'p4'" in \
        result.stderr


def test_a_cord_may_land_on_a_power_source() -> None:
    text = TEXT.replace("  rows:\n", "  power_sources:\n    - {name: ups-1, kw: 500}\n  rows:\n", 1)
    loaded = load_text(text.replace("panel: p3}", "panel: ups-1}", 1), "ring.yaml")
    assert loaded.cluster.site is not None and loaded.cluster.site.power_sources[0].name == "ups-1"
