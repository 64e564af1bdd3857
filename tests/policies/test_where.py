"""Where a finding is: rules say which rack, row or pool as a typed reference, the report links findings to
rack cards from it, and the labels text and JSON output show stay the strings they always were."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import yaml

from clusterforge.formats import render
from clusterforge.policies import Finding, load_waivers
from clusterforge.policies.findings import PoolRef, RackRef, RowRef, WaiverRef
from tests.policies.builders import aws, evaluate_data, feed, onprem, rack

# a02 on 208 V 30 A feeds: 20.4 kW against 17.3 kW a side, PWR-002; a01 beside it passes
SMALL_FEEDS = [feed("a02-a", "A", 208, 30), feed("a02-a2", "A", 208, 30),
               feed("a02-b", "B", 208, 30), feed("a02-b2", "B", 208, 30)]
TWO_RACKS = onprem([rack("a01"), rack("a02", feeds=SMALL_FEEDS)])


def test_a_power_finding_names_its_rack() -> None:
    [finding] = [f for f in evaluate_data(TWO_RACKS).findings if f.id == "PWR-002"]
    assert finding.where == RackRef(row="a", rack="a02")
    assert finding.group == "row a / rack a02"


def test_the_report_links_the_finding_to_that_rack(cli, tmp_path: Path) -> None:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(yaml.safe_dump(TWO_RACKS, sort_keys=False))
    out = tmp_path / "r.html"
    assert cli("report", blueprint, "-o", out).exit_code == 0
    html = out.read_text()
    assert '<a href="#rack-a02">' in html and 'class="rack-card failing" id="rack-a02"' in html
    assert '<a href="#rack-a01">' not in html and 'class="rack-card" id="rack-a01"' in html


def test_row_pool_and_waiver_findings_carry_their_own_refs(tmp_path: Path) -> None:
    row = evaluate_data(onprem([rack(count=2, cooling={"kind": "air"})], row={"cooling": {"crah_kw": [10, 10]}}))
    assert [f.where for f in row.findings if f.id == "CLG-004"] == [RowRef("a")]
    pool = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 2, "partition": "train",
                       "placement": "none"}])
    pool["aws"]["capacity"] = {"type": "on-demand"}
    assert [f.where for f in evaluate_data(pool).findings if f.id == "NET-006"] == [PoolRef("gpu")]
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers:\n  - {rule: RCK-002, cluster: t, target: 'site.rows[0].racks[0]', reason: 'heavy rack "
                       "accepted by facilities', expires: 2027-03-31}\n")
    unused = evaluate_data(onprem(), waivers=load_waivers(waivers), today=dt.date(2026, 11, 21))
    assert [(f.where, f.group) for f in unused.findings if f.id == "WVR-002"] == [(WaiverRef(0), "waivers")]


def test_labels_are_the_strings_output_always_showed() -> None:
    assert RackRef("a", "a01").label == "row a / rack a01"
    assert RowRef("a").label == "row a"
    assert PoolRef("gpu").label == "pool gpu"
    assert WaiverRef(3).label == "waivers"
    assert Finding("CLG-004", "error", "x", "m").group == "cluster"


def test_json_keeps_the_group_label_and_its_key_order() -> None:
    finding = Finding("PWR-002", "error", "site.rows[0].racks[1]", "m", "h", 20.4, 17.3, "kW", "bp.yaml", 9,
                      RackRef("a", "a02"))
    assert list(finding.to_json()) == ["id", "level", "path", "message", "hint", "measured", "limit", "unit",
                                       "file", "line", "group", "minimum", "cluster"]
    data = json.loads(render(evaluate_data(TWO_RACKS), "json"))
    [power] = [f for f in data["findings"] if f["id"] == "PWR-002"]
    assert power["group"] == "row a / rack a02" and "where" not in power
