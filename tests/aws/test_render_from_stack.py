"""`clusterforge render --from-stack`: the planner's inventory and SLURM files with the deployed addresses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from clusterforge.render.yamlout import load
from tests.aws.conftest import EXAMPLES, Run, run_main

Stack = Callable[..., Run]


@pytest.mark.parametrize(("example", "controller"), [("aws-p5", "controller-0001"), ("aws-p5en", "head-0001")])
def test_render_from_the_stack_outputs(stack: Stack, cli: Callable[..., Result], tmp_path: Path, example: str,
                                       controller: str) -> None:
    exports = stack(run_main({"blueprint": str(EXAMPLES / f"{example}.yaml")})).exports
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(exports, indent=2))  # as `pulumi stack output --json` prints it
    result = cli("render", EXAMPLES / f"{example}.yaml", "-o", tmp_path / "out", "--from-stack", outputs)
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    inventory = load((out / "inventory" / "hosts.yml").read_text())["all"]
    ips = {n["name"]: n["private_ip"] for n in exports["nodes"]}
    gpus = inventory["children"]["pool_gpu"]
    assert "hosts" not in gpus  # slurmctld launches them; they configure themselves and have no address yet
    assert gpus["vars"]["gres"] == ("gpu:h200:8" if example == "aws-p5en" else "gpu:h100:8")  # the plan's facts
    assert list(inventory["children"]["slurm_controller"]["hosts"]) == [controller]
    assert inventory["vars"]["slurm_controller_addr"] == ips[controller]
    assert inventory["vars"]["lustre_client_fsx_mount_name"] == exports["lustre"]["mount_name"]
    # slurm.conf and group_vars name the controller the stack built
    assert f"SlurmctldHost={controller}\n" in (out / "slurm" / "slurm.conf").read_text()
    group_vars = load((out / "inventory" / "group_vars" / "all.yml").read_text())
    assert group_vars["slurm_controller_host"] == controller


def test_render_refuses_another_clusters_outputs(stack: Stack, cli: Callable[..., Result], tmp_path: Path) -> None:
    exports = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5en.yaml")})).exports
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(exports))
    result = cli("render", EXAMPLES / "aws-p5.yaml", "-o", tmp_path / "out", "--from-stack", outputs)
    assert result.exit_code == 2 and "outputs are of cluster vision-p5en, the blueprint is nlp-p5" in result.output
    assert not (tmp_path / "out").exists()


def test_hostile_outputs_are_refused_located(stack: Stack, cli: Callable[..., Result], tmp_path: Path) -> None:
    """Stack outputs are untrusted: a value without its field's form stops the render (exit 2, the outputs
    file's line), and a huge or wrong-typed value is not echoed whole."""
    exports = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml")})).exports
    exports["nodes"][0]["private_ip"] = "10.0.0.5\n  ansible_connection: local"
    exports["controller"]["private_ip"] = {"nested": "x" * 5000}
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(exports, indent=2))
    result = cli("render", EXAMPLES / "aws-p5.yaml", "-o", tmp_path / "out", "--from-stack", outputs)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "x" * 100 not in result.output
    assert f"{outputs}:" in result.output and "controller.private_ip" in result.output
    assert not (tmp_path / "out").exists()
    exports["controller"]["private_ip"] = "10.0.0.5"
    outputs.write_text(json.dumps(exports, indent=2))
    result = cli("render", EXAMPLES / "aws-p5.yaml", "-o", tmp_path / "out", "--from-stack", outputs)
    assert result.exit_code == 2 and "nodes[0].private_ip" in result.output and "is not an IP address" in result.output
    assert "\nansible_connection" not in result.output and len(result.output.splitlines()) == 1


def test_the_p6_b300_template_from_new_to_render_from_stack(stack: Stack, cli: Callable[..., Result],
                                                            tmp_path: Path) -> None:
    """The whole workflow on `clusterforge new aws-p6-b300`: check passes, the real stack program (its policy
    guard included) builds the 17-interface launch template, and its outputs render the inventory."""
    blueprint = tmp_path / "b300.yaml"
    assert cli("new", "aws-p6-b300", "-o", blueprint).exit_code == 0
    assert cli("check", blueprint).exit_code == 0
    run = stack(run_main({"blueprint": str(blueprint)}))
    [template] = [t.inputs for t in run.recorder.of_type("aws:ec2/launchTemplate:LaunchTemplate")
                  if t.inputs["instanceType"] == "p6-b300.48xlarge"]
    assert [(n["networkCardIndex"], n.get("interfaceType")) for n in template["networkInterfaces"]] == [
        (0, None), *((card, "efa-only") for card in range(1, 17))]
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(run.exports, indent=2))
    result = cli("render", blueprint, "-o", tmp_path / "out", "--from-stack", outputs)
    assert result.exit_code == 0, result.output
    inventory = load((tmp_path / "out" / "inventory" / "hosts.yml").read_text())["all"]
    gpus = inventory["children"]["pool_gpu"]
    assert "hosts" not in gpus and gpus["vars"]["gres"] == "gpu:b300:8" and gpus["vars"]["efa_interfaces"] == 16
    assert list(inventory["children"]["slurm_controller"]["hosts"]) == ["head-0001"]
