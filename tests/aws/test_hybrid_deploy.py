"""A hybrid blueprint (`target: onprem`, a `target: aws` pool) through the real stack program under the mocks: the
stack builds the cloud pool's launch template and what it needs, nothing for the hall's pools, no controller on
AWS (an IAM user for the on-prem one), and its outputs, inventory and `render` agree on every name."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import Result

from clusterforge.core.hostlist import expand
from clusterforge.render.yamlout import load
from tests.aws.conftest import EXAMPLES, Run, run_main

Stack = Callable[..., Run]
HYBRID = EXAMPLES / "hybrid-burst.yaml"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
PROFILE = "aws:iam/instanceProfile:InstanceProfile"
USER = "aws:iam/user:User"
USER_POLICY = "aws:iam/userPolicy:UserPolicy"
PG = "aws:ec2/placementGroup:PlacementGroup"
IMAGE = "aws:imagebuilder/image:Image"


def deploy(stack: Stack, **config: str) -> Run:
    """The stack as a user deploys it: with a NAT gateway, the image build's route to its packages."""
    return stack(run_main({"blueprint": str(HYBRID), "natGateway": "true", **config}))


def rendered(cli: Callable[..., Result], out: Path, *extra: Any) -> dict[str, Any]:
    result = cli("render", HYBRID, "-o", out, *extra)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads((out / "slurm" / "clusterforge-powersave.json").read_text())
    return data


def test_the_stack_builds_the_cloud_pool_and_nothing_of_the_hall(stack: Stack) -> None:
    run = deploy(stack)
    rec = run.recorder
    [template] = rec.of_type(LT)
    assert template.name == "compute-burst-lt" and template.inputs["name"] == "vision-hybrid-burst"
    assert template.inputs["instanceType"] == "p5.48xlarge" and len(template.inputs["networkInterfaces"]) == 32
    assert [g.inputs["name"] for g in rec.of_type(PG)] == ["vision-hybrid-burst"]
    assert not rec.of_type(INSTANCE)  # no controller on AWS, no node of ctl or gpu
    hall = [r.name for r in rec.resources if any(part in ("ctl", "gpu") for part in r.name.split("-"))]
    assert hall == []
    assert [i.name for i in rec.of_type(IMAGE)] == ["compute-image-nvidia"]  # one image, for burst only
    # the nodes' and the image build's; no controller's
    assert sorted(p.name for p in rec.of_type(PROFILE)) == ["compute-image-build-profile", "compute-nodes-profile"]
    [user] = rec.of_type(USER)
    assert user.inputs["name"] == "vision-hybrid-controller" and user.inputs["path"] == "/clusterforge/"
    policies = {p.name: json.loads(p.inputs["policy"]) for p in rec.of_type(USER_POLICY)}
    power_save = {s["Sid"]: s for s in policies["compute-controller-power-save"]["Statement"]}
    assert power_save["Launch"]["Action"] == ["ec2:CreateFleet", "ec2:RunInstances"]
    assert power_save["TerminateOwnInstances"]["Condition"] == {
        "StringEquals": {"aws:ResourceTag/clusterforge:cluster": "vision-hybrid"}}
    assert power_save["PassNodeRole"]["Resource"] == rec.one("aws:iam/role:Role", "compute-nodes-role").outputs["arn"]
    assert "MakeMungeKeyOnce" in {s["Sid"] for s in policies["compute-controller-boot"]["Statement"]}
    print(f"hybrid-burst: {len(rec.resources)} resources registered")


def test_outputs_inventory_and_render_agree(stack: Stack, cli: Callable[..., Result], tmp_path: Path) -> None:
    exports = deploy(stack, controllerAddress="192.168.10.5").exports
    assert exports["controller"] == {"name": "ctl-0001", "private_ip": "192.168.10.5", "on_premises": True,
                                     "iam_user": "vision-hybrid-controller",
                                     "boot_bucket": exports["controller"]["boot_bucket"]}
    assert exports["controller"]["boot_bucket"].startswith("vision-hybrid-boot-")  # the node maps' bucket
    assert exports["onprem_pools"] == ["ctl", "gpu"] and exports["nodes"] == []
    [template] = exports["launch_templates"]
    power_save = rendered(cli, tmp_path / "plain")
    [group] = power_save["groups"]
    assert (template["pool"], template["name"]) == (group["name"], group["launch"]["launch_template"]) == (
        "burst", "vision-hybrid-burst")
    assert template["nodes"] == len(expand(group["nodes"])) == 32
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(exports, indent=2))
    rendered(cli, tmp_path / "out", "--from-outputs", outputs)
    out = tmp_path / "out"
    inventory = load((out / "inventory" / "hosts.yml").read_text())["all"]
    plain = load((tmp_path / "plain" / "inventory" / "hosts.yml").read_text())["all"]
    assert inventory["children"] == plain["children"]  # every host and group as the render has them
    assert inventory["vars"]["slurm_controller_host"] == "ctl-0001"
    assert inventory["vars"]["slurm_controller_addr"] == "192.168.10.5"
    result = cli("inventory", "--from-outputs", outputs)
    assert result.exit_code == 0, result.output
    alone = load(result.output)["all"]
    assert list(alone["children"]["slurm_controller"]["hosts"]) == ["ctl-0001"]
    assert alone["children"]["pool_burst"] == {"vars": {"pool": "burst", "role": "compute",
                                                        "instance_type": "p5.48xlarge", "power_saved": True},
                                               "hosts": {}}
    assert set(alone["children"]) == {"slurm_controller", "slurm_compute", "pool_burst"}


def test_cloud_nodes_find_the_onprem_controller(stack: Stack) -> None:
    rec = deploy(stack, controllerAddress="192.168.10.5").recorder
    user_data = rec.one(LT).inputs["userData"]
    document = yaml.safe_load(base64.b64decode(user_data).decode())
    assert ["sh", "-c", "grep -qx '192.168.10.5 ctl-0001' /etc/hosts || echo '192.168.10.5 ctl-0001' >> /etc/hosts"] \
        in document["bootcmd"]
    refused = stack(run_main({"blueprint": str(HYBRID), "natGateway": "true", "controllerAddress": "ctl.example"}),
                    expect_error=True)
    assert "controllerAddress 'ctl.example' is not an IP address" in str(refused.error)
    aws = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "natGateway": "true",
                          "controllerAddress": "10.0.0.5"}), expect_error=True)
    assert "controllerAddress is for a hybrid blueprint" in str(aws.error)
