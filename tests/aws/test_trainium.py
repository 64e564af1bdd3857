"""Trainium (trn2.48xlarge) with the Neuron stack: the catalog's GPUs of vendor aws reach the plan, the check,
the rendered SLURM files and inventory, and the stack's launch template."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.blueprint.load import load_blueprint
from clusterforge.catalog import Instance
from clusterforge.plan import build_plan
from clusterforge.target_kernel import load_catalog
from tests.aws.blueprints import example, write
from tests.aws.conftest import Run, build_blueprint

NEURON = {"stack": "neuron", "neuron_sdk": "2.32.0", "neuron_driver": "2.30.2.0", "efa_installer": "1.47.0"}
Stack = Callable[..., Run]


def trn2(software: dict[str, str] | None = None) -> dict[str, Any]:
    """Four trn2.48xlarge on demand with the Neuron 2.32 set, a ParallelCluster-sample head and a login node."""
    data = example("aws-p6-b200")
    data["name"] = "research-trn2"
    data["pools"] = [
        {"name": "trn", "hardware": "trn2.48xlarge", "count": 4, "role": "compute", "partition": "train"},
        {"name": "head", "hardware": "m5.8xlarge", "count": 1, "role": "controller", "placement": "none"},
        {"name": "login", "hardware": "m5.4xlarge", "count": 1, "role": "login", "placement": "none"}]
    data["slurm"] = {"partitions": [{"name": "train", "pools": ["trn"], "default": True}]}
    data["software"] = NEURON if software is None else software
    return data


def test_a_trn2_pool_plans_16_gpus_of_vendor_aws(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, trn2()))
    plan = build_plan(loaded.cluster, load_catalog())
    trn = plan.pool_nodes("trn")
    assert (trn.gpu_count, trn.gpu_vendor, trn.gpu_model) == (16, "aws", "Trainium2")
    facts = dict(trn.target_vars)
    assert facts["efa_interfaces"] == 16 and facts["placement_group"] == "research-trn2-trn"
    head = plan.pool_nodes("head")
    head_facts = dict(head.target_vars)
    assert (head.gpu_count, head.gpu_vendor, head_facts["efa_interfaces"], head_facts["placement_group"]) == (
        0, None, 0, None)


def test_a_trn2_blueprint_with_the_neuron_stack_checks_clean(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("check", write(tmp_path, trn2()), "-f", "json")
    verdict = json.loads(result.stdout)
    assert result.exit_code == 0 and verdict["verdict"] == "pass", result.stdout
    # the only findings: COST-003 for each pool whose instance type the price table has no figure for here
    assert {f["id"] for f in verdict["findings"]} <= {"COST-003"}, result.stdout


def test_a_trn2_pool_renders_a_gpu_gres_and_its_count(cli: Callable[..., Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("render", write(tmp_path, trn2()), "-o", out)
    assert result.exit_code == 0, result.stderr
    slurm = (out / "slurm" / "slurm.conf").read_text()
    assert "NodeName=trn-[0001-0004] " in slurm and " Gres=gpu:trainium2:16 " in slurm
    gres = (out / "slurm" / "gres.conf").read_text()
    assert "NodeName=trn-[0001-0004] Name=gpu Type=trainium2 File=/dev/neuron[0-15]\n" in gres  # gpu/nrt's files
    hosts = yaml.safe_load((out / "inventory" / "hosts.yml").read_text().replace("!unsafe ", ""))
    trn = hosts["all"]["children"]["pool_trn"]["vars"]
    assert (trn["gpu_count"], trn["gres"], trn["efa_interfaces"]) == (16, "gpu:trainium2:16", 16)
    assert "hosts" not in hosts["all"]["children"]["pool_trn"]  # slurmctld launches them (State=CLOUD)
    assert "NodeName=trn-[0001-0004] " in slurm and "Gres=gpu:trainium2:16 State=CLOUD\n" in slurm


@pytest.mark.parametrize("hardware", ["trn2.48xlarge", "trn1.32xlarge"])
def test_trainium_full_layout_in_the_stack(stack: Stack, tmp_path: Path, hardware: str) -> None:
    """Trainium's card 0 carries EFA: the p5-style layout, `efa` primary and `efa-only` on every further card."""
    data = trn2()
    data["pools"][0]["hardware"] = hardware
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    [template] = [t.inputs for t in rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")
                  if t.inputs["instanceType"] == hardware]
    cards = load_catalog().of(hardware, Instance).efa_max_interfaces
    assert [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in template["networkInterfaces"]] == [
        (0, 0, "efa"), *((card, 1, "efa-only") for card in range(1, cards))]
    assert {t.inputs["instanceType"] for t in rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")} == {
        hardware, "m5.8xlarge", "m5.4xlarge"}
