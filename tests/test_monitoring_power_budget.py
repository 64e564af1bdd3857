"""The power alerts fire at the budgets the gate used, rendered from a real blueprint: render's
`monitoring_power_budgets` for examples/onprem-dgx-h100.yaml hold PWR-001/002's figures (415 V 3φ 60 A × 0.8 =
34,502 W a feed, and a rack of two such feeds, one a side, carries 34,502 W), and promtool's unit tests fire
RackPowerOverBudget and FeedPowerOverBudget one watt over them, stay silent at them, and name the rack or feed
with the measured and planned watts. A wrong threshold (another derating, `>=`, a rack summed wrong) fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.physics.assumptions import Electrical
from clusterforge.physics.electrical import derated_kw, rack_kw
from clusterforge.pipeline.analysis import Analysis, analyze, read_policy
from clusterforge.render.group_vars import power_budget_vars
from tests.conftest import ROOT
from tests.test_monitoring_rules import Unsafe, promtool_test, render_role

EXAMPLE = ROOT / "examples" / "onprem-dgx-h100.yaml"


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return analyze(EXAMPLE, read_policy(), detail=True)


@pytest.fixture(scope="module")
def rendered_vars(analysis: Analysis) -> dict[str, Any]:
    return power_budget_vars(analysis.cluster, analysis.plan)


def test_budgets_are_the_gates_figures(analysis: Analysis, rendered_vars: dict[str, Any]) -> None:
    result = analysis
    site = result.loaded.cluster.site
    assert site is not None
    racks = {rack.name: rack for _, _, _, rack in site.racks()}
    budgets = rendered_vars["monitoring_power_budgets"]
    assert sorted(budgets) == ["a01", "a02", "a03", "b01", "b02", "b03"]   # every rack holding nodes, once
    electrical = Electrical()
    for name, own in budgets.items():
        assert own["watts"] == round(rack_kw(racks[name], electrical) * 1000) == 34502
        assert own["feeds"] == {f.name: round(derated_kw(f, electrical) * 1000) for f in racks[name].feeds}
    assert rendered_vars["monitoring_inlet_limit_celsius"] == 27.0   # the site's max_inlet_c, as CLG-005 reads it


def power(node: str, rack: str, watts: float) -> dict[str, str]:
    """A node's reading as roles/telemetry writes it: its draw split over its rack's two feeds."""
    return {f'clusterforge_bmc_power_watts{{instance="{node}",job="node",node="{node}",rack="{rack}",'
            f'feed="{rack}-{side}"}}': f"{watts / 2:g}x10" for side in "ab"}


def test_alerts_fire_one_watt_over_the_budget_and_not_at_it(rendered_vars: dict[str, Any], tmp_path: Path) -> None:
    budgets = rendered_vars["monitoring_power_budgets"]
    extra = {"monitoring_power_budgets": {Unsafe(rack): {"watts": own["watts"],
                                                          "feeds": {Unsafe(f): w for f, w in own["feeds"].items()}}
                                          for rack, own in budgets.items()},
             "monitoring_inlet_limit_celsius": rendered_vars["monitoring_inlet_limit_celsius"]}
    out = render_role(tmp_path / "role", 8, [], extra)
    rack_w, feed_w = budgets["a01"]["watts"], budgets["a01"]["feeds"]["a01-a"]
    series = {**power("n1", "a01", rack_w / 3), **power("n2", "a01", rack_w / 3), **power("n3", "a01", rack_w / 3 + 1),
              **power("n4", "a02", rack_w / 2), **power("n5", "a02", rack_w / 2),          # exactly at it
              # b01's feeds each carry one watt over theirs (the rack is then far over its own budget)
              **power("n6", "b01", feed_w), **power("n7", "b01", feed_w + 2),
              'clusterforge_bmc_inlet_celsius{instance="n1",job="node",node="n1",rack="a01"}': "27.1x10",
              'clusterforge_bmc_inlet_celsius{instance="n4",job="node",node="n4",rack="a02"}': "27x10"}
    severity = {"severity": "critical", "action": "person"}
    checks = [
        {"eval_time": "6m", "alertname": "RackPowerOverBudget", "exp_alerts": [
            {"exp_labels": {"rack": "a01", **severity}, "exp_annotations": {}},
            {"exp_labels": {"rack": "b01", **severity}, "exp_annotations": {}}]},
        {"eval_time": "6m", "alertname": "FeedPowerOverBudget", "exp_alerts": [
            {"exp_labels": {"rack": "b01", "feed": f"b01-{side}", **severity}, "exp_annotations": {}}
            for side in "ab"]},
        {"eval_time": "6m", "alertname": "InletOverLimit", "exp_alerts": [
            {"exp_labels": {"instance": "n1", "node": "n1", "rack": "a01", **severity}, "exp_annotations": {}}]},
    ]
    power_rules = out / "rules" / "clusterforge-power.yml"
    data = yaml.safe_load(power_rules.read_text())
    runbooks = {rule["alert"]: rule["annotations"]["runbook"] for group in data["groups"] for rule in group["rules"]
                if "alert" in rule}
    # the annotations, evaluated by promtool: the measured and planned watts of the rack and of the feed
    expected = {
        ("RackPowerOverBudget", "a01"): f"rack a01 draws {rack_w + 1} W (its nodes' BMCs), over its planned "
                                        f"{rack_w} W",
        ("RackPowerOverBudget", "b01"): f"rack b01 draws {2 * feed_w + 2} W (its nodes' BMCs), over its planned "
                                        f"{rack_w} W",
        ("FeedPowerOverBudget", "b01-a"): f"feed b01-a of rack b01 carries {feed_w + 1} W, over its planned "
                                          f"{feed_w} W",
        ("FeedPowerOverBudget", "b01-b"): f"feed b01-b of rack b01 carries {feed_w + 1} W, over its planned "
                                          f"{feed_w} W",
    }
    for check in checks:
        for alert in check["exp_alerts"]:
            labels = alert["exp_labels"]
            key = (check["alertname"], labels.get("feed") or labels.get("rack"))
            if key in expected:
                alert["exp_annotations"] = {"summary": expected[key],
                                            "runbook": runbooks[check["alertname"]]}
            else:
                alert.pop("exp_annotations")
    # InletOverLimit's annotations are not compared (promtool compares all or none of an alert's)
    for group in data["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == "InletOverLimit":
                rule.pop("annotations", None)
    unit = tmp_path / "clusterforge-power.yml"
    unit.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    promtool_test([str(unit)], series, checks, tmp_path, "power", evaluation_interval="15s")
