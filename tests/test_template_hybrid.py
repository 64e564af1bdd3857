"""The `hybrid-burst` team template (docs/hybrid.md): an on-prem hall with a cloud burst pool. Its defaults and the
ends of every parameter's range pass `check` (tests/test_templates.py holds every template at its defaults), a
value outside them is refused naming the parameter, and what it renders is the hybrid the docs describe."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from clusterforge.blueprint.templating import discover

Cli = Callable[..., Result]
NAME = "hybrid-burst"


def _new(cli: Cli, out: Path, *sets: str) -> Result:
    return cli("new", NAME, *(a for s in sets for a in ("--set", s)), "-o", out)


@pytest.mark.parametrize("sets", [
    ["hall_nodes=1", "burst_max_count=1", "idle_minutes=1"],
    ["hall_nodes=32", "hall_hardware=hgx-h100-8gpu", "burst_max_count=1024", "idle_minutes=1440"],
    ["hall_hardware=dgx-h200", "burst_instance_type=p6-b200.48xlarge"],
    ["burst_instance_type=p5en.48xlarge", "hall_nodes=31"],
    ["burst_instance_type=p5e.48xlarge", "hall_nodes=2"],
    ["region=eu-west-1", "az_id=euw1-az1", "vpc_cidr=172.16.0.0/24", "site_name=hall.b", "name=vision-hybrid",
     "team=vision"],
])
def test_the_range_ends_pass(cli: Cli, tmp_path: Path, sets: list[str]) -> None:
    result = _new(cli, tmp_path / "bp.yaml", *sets)
    assert result.exit_code == 0, result.stderr
    assert "check passes" in result.stderr


@pytest.mark.parametrize(("setting", "fragment"), [
    ("hall_nodes=0", "allowed: 1 to 32"),
    ("hall_nodes=33", "allowed: 1 to 32"),
    ("burst_max_count=0", "allowed: 1 to 1,024"),
    ("burst_max_count=1025", "allowed: 1 to 1,024"),
    ("idle_minutes=1441", "allowed: 1 to 1,440"),
    ("hall_hardware=p5.48xlarge", "one of dgx-h100, dgx-h200, hgx-h100-8gpu"),
    ("burst_instance_type=dgx-h100", "one of p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p6-b200.48xlarge"),
    ("region=us_east_1", "parameter region='us_east_1': not of the allowed form"),
    ("az_id=us-east-1a", "parameter az_id='us-east-1a': not of the allowed form"),
    ("vpc_cidr=10.0.0.0/8", "parameter vpc_cidr='10.0.0.0/8': not of the allowed form"),
    ("vpc_cidr=10.0.300.0/16", "parameter vpc_cidr='10.0.300.0/16': not of the allowed form"),
    ("vpc_cidr=10.0.0.0/16\nx: 1", "parameter vpc_cidr="),
    ("name=Hybrid", "parameter name='Hybrid': not of the allowed form"),
    ("burst_max_cout=4", "did you mean burst_max_count?"),
])
def test_a_bad_parameter_exits_2_naming_it(cli: Cli, tmp_path: Path, setting: str, fragment: str) -> None:
    out = tmp_path / "bp.yaml"
    result = _new(cli, out, setting)
    assert result.exit_code == 2, result.stderr
    assert fragment in result.stderr and "Traceback" not in result.output
    assert not out.exists()


def test_the_parameters_are_the_ones_a_hybrid_needs() -> None:
    params = discover()[NAME].spec.params
    assert {"hall_nodes", "hall_hardware", "burst_instance_type", "burst_max_count", "idle_minutes", "region", "az_id",
            "vpc_cidr"} <= set(params)


def test_it_renders_the_hybrid_the_docs_describe(cli: Cli, tmp_path: Path) -> None:
    """The hall's nodes in train, never suspended; the burst pool in the region, State=CLOUD, launched from the
    launch template <cluster>-burst; one partition per site (SLM-009 passes)."""
    blueprint = tmp_path / "hybrid.yaml"
    assert _new(cli, blueprint, "hall_nodes=7", "burst_max_count=48", "idle_minutes=20").exit_code == 0
    data = yaml.safe_load(blueprint.read_text())
    pools = {p["name"]: p for p in data["pools"]}
    assert data["target"] == "onprem" and pools["gpu"]["count"] == 7
    assert (pools["burst"]["target"], pools["burst"]["count"], pools["burst"]["max_count"]) == ("aws", 0, 48)
    assert data["slurm"]["partitions"] == [{"name": "train", "pools": ["gpu"], "default": True},
                                           {"name": "burst", "pools": ["burst"]}]
    out = tmp_path / "out"
    assert cli("render", blueprint, "-o", out).exit_code == 0
    slurm = (out / "slurm" / "slurm.conf").read_text().splitlines()
    assert "SuspendTime=1200" in slurm and "SuspendExcNodes=gpu-[0001-0007]" in slurm
    assert "SuspendExcParts=train" in slurm
    assert any(line.startswith("NodeName=burst-[0001-0048] ") and line.endswith("State=CLOUD") for line in slurm)
    [group] = json.loads((out / "slurm" / "clusterforge-powersave.json").read_text())["groups"]
    assert (group["launch"]["launch_template"], group["launch"]["instance_type"]) == ("hybrid-burst", "p5.48xlarge")
    assert (out / "pulumi" / "Pulumi.hybrid.yaml").is_file()  # the stack that builds the burst pool


def test_docs_hybrid_shows_the_template() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "hybrid.md").read_text()
    assert f"clusterforge new {NAME} " in doc
