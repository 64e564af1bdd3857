"""InfinibandPortErrorsClimbing and the per-port error rates it reads, run through `promtool test rules` on the
monitoring role's rendered rules (rendered by Ansible as in test_monitoring_rules) with synthetic counter series
named as node exporter 1.5's infiniband collector names them (node_infiniband_symbol_error_total,
_port_errors_received_total, _link_error_recovery_total, _link_downed_total; state_id, rate_bytes_per_second;
labels device and port).

The alert fires on a port that is Active at its full rate while a counter climbs past its threshold for the hold,
and stays silent on a clean port (flat counters), on a port that is Down or trained slower (the other fabric
alerts' faults), on one burst that leaves the 10 min window before the hold is over, and on a single link recovery.
RoCE ports share the sysfs tree and the series; a port whose host has no expected rate is compared with its own
rate of the last day.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jinja2
import pytest
import yaml

from tests.test_monitoring_rules import (
    TELEMETRY,
    TESTED_ELSEWHERE,
    at,
    fired,
    node,
    promtool,
    promtool_test,
    render_role,
    run,
    severity,
)

ALERT = "InfinibandPortErrorsClimbing"
RATE = "clusterforge:infiniband_port_errors:rate10m"
WARN_PERSON = severity("warning", "person")
FULL = "5e10"   # 400 Gb/s (NDR) in bytes per second, as the collector writes the port's rate


def port(host: str, device: str, *, state: str = "4", rate: str = FULL, rack: str = "",
         **counters: str) -> dict[str, str]:
    """A port's series over 40 one-minute samples: state, rate and the named counters (sysfs names)."""
    labels = node(host) + (f',rack="{rack}"' if rack else "") + f',device="{device}",port="1"'
    metric = {"symbol_error": "symbol_error_total", "port_rcv_errors": "port_errors_received_total",
              "link_error_recovery": "link_error_recovery_total", "link_downed": "link_downed_total"}
    series = {f"node_infiniband_state_id{{{labels}}}": f"{state}x40",
              f"node_infiniband_rate_bytes_per_second{{{labels}}}": f"{rate}x40"}
    for counter in metric:
        series[f"node_infiniband_{metric[counter]}{{{labels}}}"] = counters.get(counter, "3x40")   # flat: clean
    return series


def expected(host: str, rate: str = FULL) -> dict[str, str]:
    return {f"clusterforge_expected_infiniband_rate_bytes_per_second{{{node(host)}}}": f"{rate}x40",
            f"clusterforge_expected_infiniband_ports{{{node(host)}}}": "2x40"}


SERIES: dict[str, str] = {
    # e1: mlx5_0 counts 5 symbol errors a minute at full rate (50 in 10 min); mlx5_1, the clean port beside it
    **expected("e1"),
    **port("e1", "mlx5_0", rack="a01", symbol_error="0+5x40"),
    **port("e1", "mlx5_1", rack="a01"),
    # e2: the same errors on a port that is Down: InfinibandPortDown's, not this alert
    **expected("e2"),
    **port("e2", "mlx5_0", state="1", symbol_error="0+5x40"),
    # e3: the same errors on a port trained at 200 Gb/s: InfinibandPortDegraded's
    **expected("e3"),
    **port("e3", "mlx5_0", rate="2.5e10", port_rcv_errors="0+5x40"),
    # e4: one burst of 100 symbol errors at 5 min (a reseat), flat after it
    **expected("e4"),
    **port("e4", "mlx5_0", symbol_error="0x5 100x35"),
    # e5: a port that flaps, still Active: link_downed steps every 4 min
    **expected("e5"),
    **port("e5", "mlx5_0", link_downed=" ".join(str(minute // 4) for minute in range(40))),
    # e6: one link recovery, then nothing (at most one in a window: under the threshold)
    **expected("e6"),
    **port("e6", "mlx5_0", link_error_recovery="0x10 1x30"),
    # r1: a RoCE port (same sysfs tree and series), no expected rate known (0): compared with its own best rate
    **expected("r1", "0"),
    **port("r1", "mlx5_bond_0", rate="2.5e10", port_rcv_errors="0+2x40"),
    # r2: no inventory file at all, received errors climbing
    **port("r2", "mlx5_0", port_rcv_errors="0+2x40"),
}


def fires(host: str, device: str, counter: str, **extra: str) -> dict[str, str]:
    return {**at(host, device=device, port="1", counter=counter, **extra), **WARN_PERSON}


CLIMBING = [fires("e1", "mlx5_0", "symbol_error", rack="a01"), fires("e5", "mlx5_0", "link_downed"),
            fires("r1", "mlx5_bond_0", "port_rcv_errors"), fires("r2", "mlx5_0", "port_rcv_errors")]
CHECKS = [
    fired(ALERT, "10m"),                 # pending: 15 min of hold
    fired(ALERT, "25m", *CLIMBING),      # r1, r2: 2 a minute crosses 10 in a window at about 6 min
    fired(ALERT, "39m", *CLIMBING),      # e4's burst and e6's recovery never fire
]


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_role(tmp_path_factory.mktemp("fabric-errors"), 8, []) / "rules"


def unit_rules(rules: Path, out: Path, keep_annotations: bool = False) -> list[str]:
    """The fabric rule file (recording rules and alerts), annotations removed unless kept (promtool compares all
    of an alert's annotations or none)."""
    data = yaml.safe_load((rules / "clusterforge-fabric.yml").read_text())
    for group in data["groups"]:
        for rule in group["rules"]:
            if not keep_annotations:
                rule.pop("annotations", None)
    path = out / "clusterforge-fabric.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    return [str(path)]


def test_errors_climbing_on_an_active_full_rate_port_fire_and_nothing_else_does(rules: Path, tmp_path: Path) -> None:
    promtool_test(unit_rules(rules, tmp_path), SERIES, CHECKS, tmp_path, "fabric-errors")


def test_error_rates_are_recorded_per_port_and_counter(rules: Path, tmp_path: Path) -> None:
    """The recording rule: e1 mlx5_0's symbol errors at 5 a minute, its clean neighbour at 0, per counter."""
    labels = 'instance="e1",job="node",node="e1",rack="a01",port="1"'
    tests = {"rule_files": unit_rules(rules, tmp_path), "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": [{"series": k, "values": v} for k, v in SERIES.items()],
        "promql_expr_test": [
            # per minute, rounded to 1/1000 (rate's float arithmetic reads 5.000000000000001)
            {"expr": f'round({RATE}{{instance="e1",counter="symbol_error"}} * 60, 0.001)',
             "eval_time": "15m", "exp_samples": [
                 {"labels": f'{{counter="symbol_error",device="mlx5_0",{labels}}}', "value": 5},
                 {"labels": f'{{counter="symbol_error",device="mlx5_1",{labels}}}', "value": 0}]},
            {"expr": f'count by (counter) ({RATE}{{instance="e1"}})',
             "eval_time": "15m", "exp_samples": [
                 {"labels": f'{{counter="{c}"}}', "value": 2}
                 for c in ("link_downed", "link_error_recovery", "port_rcv_errors", "symbol_error")]}]}]}
    path = tmp_path / "rates.test.yml"
    path.write_text(yaml.safe_dump(tests, sort_keys=False, width=1000))
    result = run([promtool(), "test", "rules", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_alert_names_the_node_port_rack_and_count(rules: Path, tmp_path: Path) -> None:
    series = {**expected("e1"), **port("e1", "mlx5_0", rack="a01", symbol_error="0+5x40")}
    data = yaml.safe_load((rules / "clusterforge-fabric.yml").read_text())
    runbook = next(rule["annotations"]["runbook"] for group in data["groups"] for rule in group["rules"]
                   if rule.get("alert") == ALERT)
    annotations = {
        "summary": "e1: symbol_error errors climb on mlx5_0 port 1 (50 in 10 min)",
        "description": "mlx5_0 port 1 of e1 (rack a01) is Active at its full rate, and its symbol_error counter rose "
                       "by 50 in the last 10 min, over 900 s (threshold per 10 min: link_downed 0, "
                       "link_error_recovery 1, port_rcv_errors 10, symbol_error 10).",
        "runbook": runbook}
    checks = [{"eval_time": "20m", "alertname": ALERT, "exp_alerts": [
        {"exp_labels": fires("e1", "mlx5_0", "symbol_error", rack="a01"), "exp_annotations": annotations}]}]
    promtool_test(unit_rules(rules, tmp_path, keep_annotations=True), series, checks, tmp_path, "fabric-errors")


def test_this_module_tests_the_alert_it_claims() -> None:
    assert [a for a, module in TESTED_ELSEWHERE.items() if module == Path(__file__).name] == [ALERT]


def test_the_telemetry_role_runs_node_exporter_with_the_infiniband_collector() -> None:
    """The rate and the alert read node exporter's infiniband collector: the role's flags name it, and nothing in
    them or in the default extra flags turns it off (kingpin: the last of --collector.X / --no-collector.X wins)."""
    values = {**yaml.safe_load((TELEMETRY / "defaults" / "main.yml").read_text()),
              **yaml.safe_load((TELEMETRY / "vars" / "main.yml").read_text())}
    args = ast.literal_eval(jinja2.Environment().from_string(values["telemetry_node_exporter_args"]).render(values))
    flags = [a for a in args if a in ("--collector.infiniband", "--no-collector.infiniband")]
    assert flags and flags[-1] == "--collector.infiniband", args
