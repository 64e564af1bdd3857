"""The real `stacks/aws/__main__.py`: config in, refusal on policy errors, outputs for the inventory."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from clusterforge.targets.aws.inventory import inventory, parse_outputs
from tests.aws.blueprints import example, with_errors, write
from tests.aws.conftest import EXAMPLES, MAIN, Recorder, Run, run_main

Stack = Callable[..., Run]


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_issue_done_criteria_for_aws_p5(stack: Stack) -> None:
    assert_aws_p5(stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml")})).recorder)


def assert_aws_p5(rec: Recorder) -> None:
    """examples/aws-p5.yaml as deployed: a p5.48xlarge template with 32 EFA on cards 0-31, IMDSv2, the Capacity
    Block, a cluster placement group, a self-referencing all-traffic group, 64 nodes, and 50,400 GiB PERSISTENT_2 at
    250 MB/s/TiB."""
    [template] = [t for t in rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")
                  if t.inputs["instanceType"] == "p5.48xlarge"]
    lt = template.inputs
    assert [(n["networkCardIndex"], n["interfaceType"]) for n in lt["networkInterfaces"]] == [
        (0, "efa"), *((card, "efa-only") for card in range(1, 32))]
    assert lt["metadataOptions"]["httpTokens"] == "required"
    assert lt["instanceMarketOptions"]["marketType"] == "capacity-block"
    assert lt["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"] == (
        "cr-0123456789abcdef0")
    [group] = rec.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert group.inputs["strategy"] == "cluster" and lt["placement"]["groupName"] == group.inputs["name"]
    sg = "network-cluster-sg-id"
    for typ in ("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"):
        assert any(r.inputs["securityGroupId"] == sg and r.inputs.get("referencedSecurityGroupId") == sg
                   and r.inputs["ipProtocol"] == "-1" for r in rec.of_type(typ))
    # 64 GPU nodes, none of them an instance of the stack's: slurmctld launches them from the template
    assert not [i for i in rec.of_type("aws:ec2/instance:Instance") if i.inputs["tags"]["clusterforge:pool"] == "gpu"]
    assert lt["name"] == "nlp-p5-gpu"
    fsx = rec.one("aws:fsx/lustreFileSystem:LustreFileSystem").inputs
    assert (fsx["storageCapacity"], fsx["deploymentType"], fsx["perUnitStorageThroughput"]) == (
        50400, "PERSISTENT_2", 250)


def test_policy_errors_register_nothing_and_name_the_rules(stack: Stack, tmp_path: Path) -> None:
    path = write(tmp_path, with_errors())
    run = stack(run_main({"blueprint": str(path)}), expect_error=True)
    assert run.recorder.resources == []  # not even the provider
    assert isinstance(run.error, pulumi.RunError)
    message = str(run.error)
    assert f"{path}:{line_of(path, 'efa_interfaces')}: pools[0].efa_interfaces: NET-005:" in message
    assert f"{path}:{line_of(path, 'capacity_gib')}: storage.lustre.capacity_gib: STO-001:" in message
    assert f"{path}:{line_of(path, 'throughput_mb_s_per_tib')}: storage.lustre.throughput_mb_s_per_tib: STO-002:" in (
        message)


def test_a_program_that_registers_before_failing_is_seen(stack: Stack) -> None:
    """The empty recorder above means "registered nothing", not "drained too early": this one is seen."""

    def program() -> None:
        pulumi.ComponentResource("test:index:Probe", "probe")
        raise ValueError("after registering")

    run = stack(program, expect_error=True)
    assert [r.name for r in run.recorder.resources] == ["probe"]


def test_a_waived_error_deploys(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"].setdefault("security", {})["imds_tokens"] = "optional"
    path = write(tmp_path, data)
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(yaml.safe_dump({"waivers": [{
        "rule": "SEC-001", "cluster": "nlp-p5", "target": "aws.security.imds_tokens",
        "reason": "a legacy agent needs IMDSv1 until Q2",
        "expires": "2999-01-01", "approver": "platform"}]}))
    unwaived = stack(run_main({"blueprint": str(path)}), expect_error=True)
    assert "SEC-001" in str(unwaived.error) and unwaived.recorder.resources == []
    rec = stack(run_main({"blueprint": str(path), "waivers": str(waivers)})).recorder
    templates = rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert templates and all(t.inputs["metadataOptions"]["httpTokens"] == "optional" for t in templates)


def test_a_site_catalog_from_the_stack_config_qualifies_a_software_set(stack: Stack, tmp_path: Path) -> None:
    """`catalogs` reaches the same pipeline as `check --catalog`: a set only the site's catalog knows deploys."""
    data = example("aws-p5")
    data["software"] = {"nvidia_driver": "580.95.05", "cuda": "13.0.2", "nccl": "2.28.3", "efa_installer": "1.50.0",
                        "aws_ofi_nccl": "1.21.1"}
    path = write(tmp_path, data)
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({"software": {"cuda": [
        {"cuda": "13.0.2", "min_driver": "580.95.05", "source": "qualified on the site's burn-in rack"}]}}))
    refused = stack(run_main({"blueprint": str(path)}), expect_error=True)
    assert "SW-001: CUDA 13.0.2 is not in the software tables" in str(refused.error)
    rec = stack(run_main({"blueprint": str(path), "catalogs": json.dumps([str(site)])})).recorder
    assert rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")


def test_a_capacity_block_without_a_group_of_its_own_deploys_unwaived(stack: Stack, tmp_path: Path) -> None:
    """The blueprint rule and the CrossGuard policy agree: reserved capacity was placed when it was reserved."""
    data = example("aws-p5")
    data["pools"][0]["placement"] = "none"
    rec = stack(run_main({"blueprint": str(write(tmp_path, data))})).recorder
    assert not rec.of_type("aws:ec2/placementGroup:PlacementGroup")
    templates = rec.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert templates and all("placement" not in t.inputs for t in templates)


def test_a_design_that_cannot_be_built_is_refused_before_any_resource(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["vpc_cidr"] = "10.0.0.0/26"  # 64 GPU nodes do not fit a /27 subnet
    run = stack(run_main({"blueprint": str(write(tmp_path, data))}), expect_error=True)
    assert "do not fit subnet" in str(run.error) and run.recorder.resources == []


def test_config_reaches_the_program(stack: Stack) -> None:
    rec = stack(run_main({"blueprint": str(EXAMPLES / "aws-p6-b200.yaml"), "natGateway": "true",
                          "kmsKeyArn": "arn:aws:kms:us-east-2:111122223333:key/k", "protectData": "false",
                          "controllerInstanceType": "m7i.4xlarge"})).recorder
    assert rec.one("aws:ec2/natGateway:NatGateway")
    assert rec.one("aws:fsx/lustreFileSystem:LustreFileSystem").inputs["kmsKeyId"].endswith(":key/k")
    assert not rec.one("aws:s3/bucket:Bucket", "storage-checkpoints-bucket").protect
    provider = rec.one("pulumi:providers:aws").inputs
    assert provider["region"] == "us-east-2"
    assert json.loads(provider["defaultTags"])["tags"]["clusterforge:cluster"] == "research-b200"


def test_the_project_defaults_mean_the_programs_defaults(stack: Stack) -> None:
    """The CLI passes Pulumi.yaml's defaults ("" and booleans) to every stack; they must change nothing."""
    declared = yaml.safe_load((MAIN.parent / "Pulumi.yaml").read_text())["config"]
    defaults = {k: str(v["default"]).lower() if isinstance(v["default"], bool) else json.dumps(v["default"])
                if isinstance(v["default"], list) else v["default"] for k, v in declared.items() if "default" in v}
    config = {"blueprint": str(EXAMPLES / "aws-p5.yaml")}
    route = {"packageMirror": "true"}  # the default (false) refuses the bake: test_bake_route
    explicit = stack(run_main(config | defaults | route)).recorder
    implicit = stack(run_main(config)).recorder
    def inputs(r: Any) -> Any:  # the munge key is random at each run (kept once made: ignore_changes)
        return {k: v for k, v in r.inputs.items() if r.typ != "aws:ssm/parameter:Parameter" or k != "value"}

    shape = [(r.typ, r.name, inputs(r), r.protect) for r in explicit.resources]
    assert sorted(shape, key=repr) == sorted([(r.typ, r.name, inputs(r), r.protect) for r in implicit.resources],
                                             key=repr)
    assert "kmsKeyId" not in explicit.one("aws:fsx/lustreFileSystem:LustreFileSystem").inputs
    assert explicit.named("compute-controller-lt").inputs["instanceType"] == "m7i.4xlarge"


def test_relative_paths_are_relative_to_the_project(stack: Stack) -> None:
    rec = stack(run_main({"blueprint": "../../examples/aws-p5en.yaml"})).recorder
    assert rec.one("aws:ec2/placementGroup:PlacementGroup").inputs["name"] == "vision-p5en-gpu"


def test_outputs_carry_the_inventory(stack: Stack) -> None:
    run = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml")}))
    out = run.exports
    assert out["outputs_version"] == 1 and out["cluster"] == "nlp-p5" and out["region"] == "us-east-1"
    [controller] = out["nodes"]  # the GPU nodes are slurmctld's to launch: the pool's template stands for them
    by_name = {n["name"]: n for n in out["nodes"]}
    assert controller["pool"] == "controller" and controller["instance_type"] == "m7i.4xlarge"
    assert controller["instance_id"].startswith("i-") and controller["private_ip"].startswith("10.0.")
    [template] = out["launch_templates"]
    assert (template["pool"], template["name"], template["nodes"]) == ("gpu", "nlp-p5-gpu", 64)
    assert template["launch_template_id"].startswith("lt-0")
    assert out["controller"] == {"name": "controller-0001", "private_ip": by_name["controller-0001"]["private_ip"]}
    assert out["lustre"] == {"file_system_id": "storage-lustre-fs-id",
                             "dns_name": "storage-lustre-fs-id.fsx.example.amazonaws.com", "mount_name": "abcdefgh",
                             "mount": "/fsx", "data_path": None, "checkpoint_path": "/checkpoints"}
    assert out["checkpoint_bucket"] == "nlp-p5-ckpt-20261121" and out["ami"].startswith("ami-")
    # what `pulumi stack output --json` prints is what the inventory command reads
    groups = inventory(parse_outputs(json.dumps(out)))["all"]["children"]
    hosts = groups["pool_controller"]["hosts"]
    assert hosts["controller-0001"]["ansible_host"] == by_name["controller-0001"]["private_ip"]
    # the launched pool keeps its group with no host, as render's inventory has it
    assert groups["pool_gpu"] == {"vars": {"pool": "gpu", "role": "compute", "instance_type": "p5.48xlarge",
                                           "power_saved": True}, "hosts": {}}
    assert groups["slurm_compute"] == {"children": {"pool_gpu": {}}}


def test_policy_warnings_are_logged_not_fatal(stack: Stack, tmp_path: Path,
                                              caplog: pytest.LogCaptureFixture) -> None:
    data = example("aws-p5")
    data["pools"][0]["efa_interfaces"] = 16  # NET-005 warning: half the bandwidth
    path = write(tmp_path, data)
    with caplog.at_level(logging.WARNING):
        run = stack(run_main({"blueprint": str(path)}))
    assert len(run.recorder.of_type("aws:ec2/launchTemplate:LaunchTemplate")) == 2
    assert f"{path}:{line_of(path, 'efa_interfaces')}: NET-005: pool gpu uses 16 of 32" in caplog.text
