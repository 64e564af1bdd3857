"""`clusterforge check` end to end: verdicts worked out by hand, exit codes, and every output format
pointing at the offending line."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.conftest import EXAMPLES, example_files

HALL = EXAMPLES / "onprem-dgx-h100.yaml"


def test_examples_pass_with_warnings_only(cli) -> None:
    result = cli("check", *example_files(), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "pass" and data["summary"]["error"] == 0


@pytest.mark.parametrize(("example", "warnings"), [
    ("onprem-dgx-h100.yaml", {"PWR-003"}),          # DGX H100 keeps 3 of 4+2 PSUs on a feed loss
    ("onprem-dgx-h100-hall.yaml", {"PWR-003", "COST-003"}),  # its cpu-1u controllers have no price
    # 48 PSUs split 24/24, 24 carry 132 kW; no rack for the fabric's 14 switches: an NVL72 is its rack (RCK-007)
    # 48 PSUs split 24/24, 24 carry 132 kW; switches in n01; no price for a GB200 NVL72 rack (COST-003)
    ("onprem-gb200-nvl72-row.yaml", {"COST-003"}),
    ("aws-p5.yaml", set()),                         # 49.2 TiB × 250 = 12.3 GB/s: 980 GB in 80 s
    # COST-003: the table prices their controllers (and the p6-b200) for us-east-1 only, not us-west-2 or us-east-2
    ("aws-p5en.yaml", {"COST-003"}),                # 18.75 TiB × 500 = 9.4 GB/s: 980 GB in 105 s
    ("aws-p6-b200.yaml", {"COST-003"}),
])
def test_hand_worked_verdicts(cli, example: str, warnings: set[str]) -> None:
    data = json.loads(cli("check", EXAMPLES / example, "-f", "json").stdout)
    assert data["verdict"] == "pass"
    assert {f["id"] for f in data["findings"] if f["level"] == "warning"} == warnings


def _break_rack_a02_power(write) -> Path:
    """Rack a02 gets 208 V 3φ 60 A feeds (17.3 kW each) for its 30.6 kW: 15.3 kW a feed with both sides up is
    fine, one side alone is not: PWR-002 on its line, nothing else."""
    text = HALL.read_text().replace(
        "{name: a02-a, side: A, voltage: 415, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 415, amps: 60",
        "{name: a02-a, side: A, voltage: 208, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 208, amps: 60")
    assert "voltage: 208" in text
    return write(text, "broken.yaml")


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_one_broken_rule_reported_once_in_json(cli, write) -> None:
    bad = _break_rack_a02_power(write)
    result = cli("check", bad, "-f", "json")
    assert result.exit_code == 1
    errors = [f for f in json.loads(result.stdout)["findings"] if f["level"] == "error"]
    assert [(f["id"], f["line"], f["path"]) for f in errors] == [
        ("PWR-002", _line(bad, "name: a02,"), "site.rows[0].racks[1].feeds")]


def test_github_annotation_on_the_line(cli, write) -> None:
    bad = _break_rack_a02_power(write)
    result = cli("check", bad, "-f", "github")
    assert result.exit_code == 1
    assert f"::error file={bad},line={_line(bad, 'name: a02,')},title=PWR-002::rack a02 draws 30.6 kW" \
        in result.stdout


def test_sarif(cli, write) -> None:
    bad = _break_rack_a02_power(write)
    log = json.loads(cli("check", bad, "-f", "sarif").stdout)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"PWR-002", "NET-005", "SLM-002"}
    [error] = [r for r in run["results"] if r["level"] == "error"]
    assert error["ruleId"] == "PWR-002"
    assert error["locations"][0]["physicalLocation"]["region"]["startLine"] == _line(bad, "name: a02,")
    assert error["partialFingerprints"]["clusterforgeFinding/v1"]
    assert run["tool"]["driver"]["rules"][error["ruleIndex"]]["id"] == "PWR-002"


def test_junit_one_testcase_per_rule_and_target(cli, write) -> None:
    bad = _break_rack_a02_power(write)
    root = ET.fromstring(cli("check", bad, "-f", "junit").stdout)
    cases = root.findall(".//testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["PWR-002 site.rows[0].racks[1].feeds"]
    assert failed[0].get("line") == str(_line(bad, "name: a02,"))
    assert {"RCK-001", "SLM-001"} <= {c.get("name") for c in cases}
    assert root.get("failures") == "1"


def test_text_output_groups_by_rack_with_utilisation(cli, write) -> None:
    result = cli("check", _break_rack_a02_power(write))
    assert result.exit_code == 1
    assert "row a / rack a02" in result.stdout and "177%" in result.stdout   # 30.6 / 17.3
    assert "FAIL: 1 error, 1 warning" in result.stdout


def test_output_file_written(cli, write, tmp_path) -> None:
    out = tmp_path / "r.sarif"
    assert cli("check", _break_rack_a02_power(write), "-f", "sarif", "-o", out).exit_code == 1
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_invalid_input_exits_2(cli, write) -> None:
    result = cli("check", write("apiVersion: clusterforge/v1\nkind: Cluster\n"))
    assert result.exit_code == 2 and "missing required key 'name'" in result.stderr


def test_unknown_skip_is_a_usage_error(cli) -> None:
    assert cli("check", HALL, "--skip", "PWR-999").exit_code == 2


def test_fail_level_warning(cli) -> None:
    assert cli("check", HALL, "--fail-level", "warning").exit_code == 1


def test_waivers_file_from_cli(cli, write, tmp_path) -> None:
    bad = _break_rack_a02_power(write)
    waivers = tmp_path / "w.yaml"
    waivers.write_text("waivers:\n  - {rule: PWR-002, cluster: vision-h100, target: 'site.rows[0].racks[1].feeds', "
                       "reason: 'temporary "
                       "feeds until CHG-42', expires: 2099-01-01, approver: dc-ops}\n")
    result = cli("check", bad, "--waivers", waivers, "-f", "json")
    assert result.exit_code == 0
    assert [f["id"] for f in json.loads(result.stdout)["waived"]] == ["PWR-002"]
