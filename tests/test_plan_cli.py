"""`clusterforge plan`: text for people, JSON for tools, input errors as file:line."""

from __future__ import annotations

import json
import re

import yaml

from tests.conftest import EXAMPLES
from tests.policies.builders import design


def test_plan_text_onprem(cli, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole table rows and lines, as matched below
    result = cli("plan", EXAMPLES / "onprem-dgx-h100.yaml")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for expected in ("a01", "b03", "24/40 (60 %)", "30.6/34.5 (89 %)", "541.3/1,080 (50 %)",  # rack use vs limit
                     "2 tier(s), 128 endpoints", "leaf", "spine", "128 (node-leaf)", "256/256 (100 %)",
                     "gpu-[0001-0016]", "8 rails", "slurm controller: gpu-0001"):
        assert expected in out, expected


def test_plan_json_is_the_full_plan(cli) -> None:
    result = cli("plan", EXAMPLES / "onprem-dgx-h100.yaml", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["cluster"] == "vision-h100"
    assert [r["name"] for r in data["racks"]] == ["a01", "a02", "a03", "b01", "b02", "b03"]
    assert data["racks"][0]["used"]["kw"] == 30.6 and data["racks"][0]["limits"]["kw"] == 34.502
    assert (data["fabric"]["leaves"], data["fabric"]["spines"], data["fabric"]["cables"]["leaf-spine"]) == (4, 2, 128)
    gpu = data["nodes"][0]
    assert gpu["hostlist"] == "gpu-[0001-0016]"
    assert gpu["runs"][0] == {"hosts": "gpu-[0001-0003]", "rack": "a01", "row": "a", "positions": [1, 9, 17]}
    assert data["slurm"]["nodes"][0]["gpu_type"] == "h100"
    assert data["topology"][0] == {"name": "leaf-001", "tier": "leaf", "nodes": "gpu-[0001-0016]", "switches": ""}


def test_plan_aws_shows_efa(cli) -> None:
    result = cli("plan", EXAMPLES / "aws-p5.yaml")
    assert result.exit_code == 0
    assert "32 EFA, pg nlp-p5-gpu, use1-az4" in result.stdout
    data = json.loads(cli("plan", EXAMPLES / "aws-p5.yaml", "-f", "json").stdout)
    assert data["racks"] == [] and data["fabric"] is None and data["nodes"][0]["efa_interfaces"] == 32


def test_plan_128_dgx_h100_is_32_leaves_16_spines(cli, write) -> None:
    path = write(yaml.safe_dump(design()))  # 128 DGX H100, no site
    result = cli("plan", path)
    assert result.exit_code == 0
    assert "no site (design only)" in result.stdout
    assert re.search(r"│ leaf\s+│\s+32 │", result.stdout) and re.search(r"│ spine\s+│\s+16 │", result.stdout)
    fabric = json.loads(cli("plan", path, "-f", "json").stdout)["fabric"]
    assert (fabric["tiers"], fabric["leaves"], fabric["spines"], fabric["cores"]) == (2, 32, 16, 0)


def test_plan_three_tiers_past_2048_endpoints(cli, write) -> None:
    path = write(yaml.safe_dump(design([{"name": "gpu", "hardware": "dgx-h100", "count": 257,
                                         "partition": "train"}])))
    fabric = json.loads(cli("plan", path, "-f", "json").stdout)["fabric"]
    assert fabric["endpoints"] == 2056 and fabric["tiers"] == 3 and fabric["cores"] > 0
    assert "3 tier(s)" in cli("plan", path).stdout


def test_plan_reports_auto_placement_and_unplaced(cli, write, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole table rows and lines, as matched below
    data = yaml.safe_load((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    for row in data["site"]["rows"]:
        for rack in row["racks"]:
            rack.pop("devices", None)
    data["pools"][0]["count"] = 20
    path = write(yaml.safe_dump(data))
    result = cli("plan", path)
    assert result.exit_code == 1, "nodes that fit in no rack: the planner cannot build it"
    assert f"{path}: cannot be built: 2 node(s) of pool gpu fit in no rack" in result.stderr
    assert "gpu ×3 (auto)" in result.stdout
    assert "auto-placed: gpu 18 node(s) into 6 rack(s)" in result.stdout
    assert "lower bound: 7 rack(s)" in result.stdout
    assert "unplaced: gpu 2 node(s) fit in no rack" in result.stdout


def test_plan_exits_1_on_a_fabric_beyond_its_switches_with_the_plan_printed(cli, write) -> None:
    """100,000 endpoints (12,500 DGX × 8 NICs) on 64-port switches: three tiers carry at most 65,536."""
    path = write(yaml.safe_dump(design([{"name": "gpu", "hardware": "dgx-h100", "count": 12_500,
                                         "partition": "train"}])))
    result = cli("plan", path)
    assert result.exit_code == 1
    assert "cannot be built: the fabric needs 100,000 endpoints; 3 tiers of 64-port switches at 1:1 carry at most " \
           "65,536" in result.stderr
    assert "fabric" in result.stdout and "check: FAIL" in result.stdout  # the plan and NET-001 are still shown
    data = json.loads(cli("plan", path, "-f", "json").stdout)
    assert data["infeasible"] and data["check"]["verdict"] == "fail"


def test_plan_shows_the_same_verdict_as_check(cli) -> None:
    assert "check: PASS (0 errors, 1 warning, 0 waived)" in cli("plan", EXAMPLES / "onprem-dgx-h100.yaml").stdout


def test_plan_bad_input_exits_2(cli, write) -> None:
    bad = write((EXAMPLES / "aws-p5.yaml").read_text().replace("count: 64", "cuont: 64"))
    result = cli("plan", bad)
    assert result.exit_code == 2 and f"{bad}:10: pools[0].cuont: unknown key" in result.stderr
    assert "Traceback" not in result.output
