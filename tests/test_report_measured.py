"""`report --measured`: a Prometheus export of the nodes' BMC readings summed by rack and feed, beside the budgets
the gate holds the design to (onprem-dgx-h100: six racks, each 34.5 kW usable per side, 27 °C inlet limit)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.test_report import browser

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
EXAMPLE_JSON = EXAMPLES / "measured" / "onprem-dgx-h100-bmc.json"
EXAMPLE_TEXT = EXAMPLES / "measured" / "onprem-dgx-h100-bmc.prom"
POWER, INLET = "clusterforge_bmc_power_watts", "clusterforge_bmc_inlet_celsius"
A01 = ("gpu-0001", "gpu-0002", "gpu-0003")  # the plan's nodes of rack a01


def series(metric: str, value: float | str, **labels: str) -> dict[str, Any]:
    return {"metric": {"__name__": metric, **labels}, "value": [1764115200.0, str(value)]}


def export(tmp_path: Path, *items: dict[str, Any], name: str = "bmc.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "vector", "result": list(items)}}))
    return path


def a01(watts: float, **labels: str) -> list[dict[str, Any]]:
    """Rack a01's three nodes drawing `watts` each."""
    return [series(POWER, watts, instance=f"{node}:9100", rack="a01", **labels) for node in A01]


def compared(*paths: Path) -> Any:
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report.measured import compare
    from clusterforge.report.prometheus import read_export

    return compare(analyze(ONPREM, read_policy()), [read_export(p) for p in paths])


def report(cli, tmp_path: Path, *exports: Path) -> tuple[str, str]:
    out = tmp_path / "report.html"
    args = [a for e in exports for a in ("--measured", e)]
    result = cli("report", ONPREM, *args, "-o", out)
    assert result.exit_code == 0, result.output
    return out.read_text(), result.stderr


def rack_row(html: str, rack: str) -> str:
    row = re.search(rf'<tr class="(\w+)" data-measured-rack="{rack}">', html)
    assert row, rack
    return row.group(1)


def test_a_rack_over_its_budget_is_flagged(cli, tmp_path: Path) -> None:
    # 3 × 11.6 kW = 34.8 kW against 34.5 kW usable per side (415 V 60 A three-phase × 0.8): over
    html, said = report(cli, tmp_path, export(tmp_path, *a01(11_600)))
    assert rack_row(html, "a01") == "over" and rack_row(html, "a02") == "within"
    assert "1 rack and 0 feeds over budget" in said
    assert re.search(r'data-measured-rack="a01"><td>a01 <span class="lvl error">over</span></td><td class="num">30\.6'
                     r'</td><td class="num">34\.5</td><td class="num">34\.8</td>', html)


def test_a_rack_under_its_budget_is_not(cli, tmp_path: Path) -> None:
    html, said = report(cli, tmp_path, export(tmp_path, *a01(11_400)))  # 34.2 kW
    assert rack_row(html, "a01") == "within" and 'class="over"' not in html
    assert "0 racks and 0 feeds over budget" in said and "every rack and feed within its budget" in html


def test_over_is_decided_as_the_gate_decides_it(tmp_path: Path) -> None:
    """At the budget exactly is within (as PWR-002 holds a design), one watt above is over: the figure is the
    gate's own (physics.electrical.rack_kw), not a new one."""
    from clusterforge.physics.electrical import rack_kw
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.policies.context import Context

    analysis = analyze(ONPREM, read_policy())
    ctx = Context(analysis.loaded, analysis.plan, analysis.policy.config)
    budget = rack_kw(ctx.racks()[0][1], ctx.config.electrical)
    assert budget == pytest.approx(34.502, abs=0.001)
    for watts, over in ((budget * 1000 / 3, False), (budget * 1000 / 3 + 1, True), (budget * 1000 / 3 - 1, False)):
        [rack, *others] = compared(export(tmp_path, *a01(watts))).racks
        assert rack.name == "a01" and rack.budget_kw == budget and rack.over is over, watts
        assert not any(d.over for d in others)


def test_a_density_contract_lowers_the_racks_budget(cli, tmp_path: Path) -> None:
    """RCK-006's contract, where it is below what the feeds carry, is the rack's budget (as the alerts hold it)."""
    blueprint = tmp_path / "contract.yaml"
    contract = "  max_inlet_c: 27\n  contracted_kw_per_rack: 32\n"
    blueprint.write_text(ONPREM.read_text().replace("  max_inlet_c: 27\n", contract))
    out = tmp_path / "r.html"
    result = cli("report", blueprint, "--measured", export(tmp_path, *a01(11_000)), "-o", out)  # 33 kW
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert rack_row(html, "a01") == "over" and '<td class="num">32.0</td><td class="num">33.0</td>' in html


def test_feeds_by_label_and_split_when_unlabelled(tmp_path: Path) -> None:
    labelled = [series(POWER, 9000, node=node, rack="a01", feed="a01-a") for node in A01]
    labelled += [series(POWER, 1000, node=node, rack="a01", feed="a01-b") for node in A01]
    split = [series(POWER, 8000, node=node, rack="a02") for node in ("gpu-0004", "gpu-0005", "gpu-0006")]
    measured = compared(export(tmp_path, *labelled, *split))
    feeds = {(d.rack, d.name): d for d in measured.feeds}
    assert feeds[("a01", "a01-a")].measured_kw == pytest.approx(27.0)
    assert feeds[("a01", "a01-b")].measured_kw == pytest.approx(3.0)
    assert feeds[("a02", "a02-a")].measured_kw == pytest.approx(12.0) == feeds[("a02", "a02-b")].measured_kw
    assert feeds[("a01", "a01-a")].budget_kw == pytest.approx(34.502, abs=0.001)
    assert {d.name: d.measured_kw for d in measured.racks}["a01"] == pytest.approx(30.0)
    over = compared(export(tmp_path, *[series(POWER, 12_000, node=n, rack="a01", feed="a01-a") for n in A01]))
    assert [d.name for d in over.feeds_over] == ["a01-a"] and [d.name for d in over.racks_over] == ["a01"]


def test_racks_and_feeds_the_plan_lacks_are_reported(cli, tmp_path: Path) -> None:
    items = [series(POWER, 800, instance=f"gpu-{n:04d}:9100", rack="R01", feed="R01-A") for n in range(40, 43)]
    items += [series(POWER, 900, node="gpu-0050", rack="R02"), series(POWER, 700, node="gpu-0001", feed="a01-x")]
    path = export(tmp_path, *items)
    measured = compared(path)
    assert measured.unknown_racks == (("R01", 3), ("R02", 1)) and measured.unknown_rack_count == 2
    assert measured.unknown_feeds == (("a01/a01-x", 1),)
    assert sum(d.measured_kw for d in measured.racks) == pytest.approx(0.7)  # the unknown feed's rack still sums
    html, said = report(cli, tmp_path, path)
    assert re.search(r'id="unknown-racks">2 racks in the export that the plan lacks: '
                     r'R01 \(3 series\), R02 \(1 series\)', html)
    assert "a01/a01-x (1 series)" in html and "2 racks the plan lacks" in said


def test_nodes_without_a_reading_are_counted_not_listed(cli, tmp_path: Path) -> None:
    html, _ = report(cli, tmp_path, export(tmp_path, *a01(8000)))
    assert "pool gpu: 13 of 16 nodes have no power reading: gpu-[0004-0016]" in html
    assert html.count("gpu-0005") == 0


def test_inlet_over_the_sites_limit(tmp_path: Path) -> None:
    items = [series(INLET, 27.0, node="gpu-0001"), series(INLET, 27.2, node="gpu-0002"),
             series(INLET, 26.0, node="gpu-0004")]
    measured = compared(export(tmp_path, *items))
    assert measured.inlet_limit_c == 27
    assert measured.inlets["a01"].max_c == 27.2 and measured.inlets["a01"].node == "gpu-0002"
    assert [i.rack for i in measured.inlets_over] == ["a01"]
    assert not measured.inlets["a02"].over


def test_a_node_read_twice_counts_once(tmp_path: Path) -> None:
    one = export(tmp_path, *a01(8000), name="one.json")
    two = export(tmp_path, *a01(9000), name="two.json")
    measured = compared(one, two)
    assert {d.name: d.measured_kw for d in measured.racks}["a01"] == pytest.approx(27.0)
    assert measured.duplicates == 3 and measured.nodes_read == 3


def test_the_text_format_reads_as_the_json(tmp_path: Path) -> None:
    text = tmp_path / "bmc.prom"
    text.write_text("# TYPE clusterforge_bmc_power_watts gauge\n"
                    + "".join(f'{POWER}{{instance="{n}:9100",rack="a01",feed="a01-a"}} 11600 1764115200000\n'
                              for n in A01)
                    + 'node_load1{instance="gpu-0001:9100"} 0.5\n')
    from_text, from_json = compared(text), compared(export(tmp_path, *a01(11_600, feed="a01-a")))
    assert from_text.racks == from_json.racks and from_text.feeds == from_json.feeds
    assert from_text.racks_over and from_text.other == 1


def test_the_examples(tmp_path: Path) -> None:
    """The docs' example exports: 14 of 16 nodes, a03 the hottest (28.5 °C over 27), no rack over budget."""
    for path in (EXAMPLE_JSON, EXAMPLE_TEXT):
        measured = compared(path)
        assert (measured.nodes_read, measured.racks_over, measured.feeds_over) == (14, [], []), path
        assert [i.rack for i in measured.inlets_over] == ["a03"], path
        assert {d.name: round(d.measured_kw, 1) for d in measured.racks}["a03"] == 29.5
    assert compared(EXAMPLE_TEXT).unknown_racks == (("c01", 1),)


@pytest.mark.parametrize(("content", "where", "message"), [
    ('{"status": "success",\n "data": [', ":2:", "not JSON"),
    ('{"status": "error", "error": "bad query"}', ": status:", "not a successful Prometheus query result"),
    ('{"status": "success", "data": {"resultType": "matrix", "result": []}}', ": data.resultType:", "instant query"),
    (json.dumps({"status": "success", "data": {"resultType": "vector", "result": [series(POWER, "12 kW")]}}),
     ": data.result[0].value[1]:", "is not a number"),
    (json.dumps({"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1, "2"]}]}}),
     ": data.result[0].metric:", "without __name__"),
    ('{"a": ' + "[" * 50_000, ":", "nested too deeply"),
    (f'{POWER}{{rack="a01"}} 1\n{POWER}{{rack="a01" 2\n', ":2:", "not a Prometheus text sample"),
    (f'{POWER}{{rack="a01"}} -40\n', ":1:", "no reading a BMC gives"),
    (f'{POWER}{{rack="{"r" * 500}"}} 40\n', ":1:", "label rack is 500 characters long"),
])
def test_a_malformed_export_is_exit_2_naming_the_file(cli, tmp_path: Path, content: str, where: str,
                                                      message: str) -> None:
    bad = tmp_path / "bad-export.json"
    bad.write_text(content)
    result = cli("report", ONPREM, "--measured", bad, "-o", tmp_path / "r.html")
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith(f"{bad}{where}") and message in line and "Traceback" not in result.output, line
    assert not (tmp_path / "r.html").exists()


def test_a_large_export_is_refused(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_MAX_EXPORT_BYTES", "100")
    result = cli("report", ONPREM, "--measured", export(tmp_path, *a01(8000)), "-o", tmp_path / "r.html")
    assert result.exit_code == 2 and "over the limit of 100" in result.stderr
    assert "CLUSTERFORGE_MAX_EXPORT_BYTES" in result.stderr


def test_a_cloud_blueprint_has_no_racks_to_compare(cli, tmp_path: Path) -> None:
    result = cli("report", EXAMPLES / "aws-p5.yaml", "--measured", EXAMPLE_JSON, "-o", tmp_path / "r.html")
    assert result.exit_code == 2 and "has no site" in result.stderr and EXAMPLE_JSON.name in result.stderr


def test_the_output_may_not_overwrite_the_export(cli, tmp_path: Path) -> None:
    path = export(tmp_path, *a01(8000))
    before = path.read_text()
    result = cli("report", ONPREM, "--measured", path, "-o", path)
    assert result.exit_code == 2 and path.read_text() == before


@browser
def test_the_browser_shows_planned_beside_measured(cli, tmp_path: Path) -> None:
    from clusterforge.report.browser import run

    report(cli, tmp_path, export(tmp_path, *a01(11_600)))
    page = tmp_path / "report.html"
    dom = run(["--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()])
    assert "CONSOLE" not in dom.stderr, dom.stderr
    assert sorted(re.findall(r'data-measured-rack="([^"]+)"', dom.stdout)) == ["a01", "a02", "a03", "b01", "b02",
                                                                               "b03"]
    assert re.search(r'<tr class="over" data-measured-rack="a01">', dom.stdout)
    assert len(re.findall(r'data-measured-feed="', dom.stdout)) == 12
    assert dom.stdout.count("<span>measured draw</span>") == 6  # each drawn rack card carries the bar too
