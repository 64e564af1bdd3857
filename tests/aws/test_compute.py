"""Compute as the engine sees it: launch templates, placement groups, capacity, instances, the node role."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.catalog import Instance
from clusterforge.target_kernel import load_catalog
from tests.aws.blueprints import example, from_template, lowered_p5, p4d, p6_b300, write
from tests.aws.conftest import (
    DLAMI,
    PINNED,
    ROOT_DEVICE,
    Recorder,
    Registered,
    Run,
    baked_ami,
    build_blueprint,
    build_example,
)

LT = "aws:ec2/launchTemplate:LaunchTemplate"
PG = "aws:ec2/placementGroup:PlacementGroup"
INSTANCE = "aws:ec2/instance:Instance"
CATALOG = load_catalog()

Stack = Callable[..., Run]


def gpu_template(rec: Recorder) -> dict[str, Any]:
    return rec.one(LT, "compute-gpu-lt").inputs


def expect_layout(template: dict[str, Any], cards: int) -> None:
    nics = template["networkInterfaces"]
    assert [n["networkCardIndex"] for n in nics] == list(range(cards))
    assert (nics[0]["interfaceType"], nics[0]["deviceIndex"]) == ("efa", 0)
    assert all((n["interfaceType"], n["deviceIndex"]) == ("efa-only", 1) for n in nics[1:])
    assert all(n["securityGroups"] == ["network-cluster-sg-id"] for n in nics)
    assert all(n["subnetId"] == nics[0]["subnetId"] for n in nics)
    assert "vpcSecurityGroupIds" not in template  # per-NIC groups only (the two cannot be combined)


@pytest.mark.parametrize(("example_name", "instance_type"), [
    ("aws-p5", "p5.48xlarge"), ("aws-p5en", "p5en.48xlarge"), ("aws-p6-b200", "p6-b200.48xlarge")])
def test_full_efa_layout(stack: Stack, example_name: str, instance_type: str) -> None:
    template = gpu_template(stack(build_example(example_name)).recorder)
    assert template["instanceType"] == instance_type
    expect_layout(template, CATALOG.of(instance_type, Instance).efa_max_interfaces)


def test_p5_has_32_cards(stack: Stack) -> None:
    """The issue's figure, stated once: 32 interfaces on cards 0-31."""
    expect_layout(gpu_template(stack(build_example("aws-p5")).recorder), 32)


def test_p4d_layout(stack: Stack, tmp_path: Path) -> None:
    template = gpu_template(stack(build_blueprint(write(tmp_path, p4d()))).recorder)
    assert template["instanceType"] == "p4d.24xlarge"
    expect_layout(template, 4)


def test_p6_b300_template_keeps_card_0_for_the_primary_ena_interface(stack: Stack, tmp_path: Path) -> None:
    """`clusterforge new aws-p6-b300` through the stack: card 0 (ENA only on this type) holds just the primary
    interface, cards 1-16 one `efa-only` each at device 0; the EFA pool still gets its placement group."""
    rec = stack(build_blueprint(from_template(tmp_path, "aws-p6-b300"))).recorder
    template = gpu_template(rec)
    assert template["instanceType"] == "p6-b300.48xlarge"
    nics = template["networkInterfaces"]
    assert [(n["networkCardIndex"], n["deviceIndex"], n.get("interfaceType")) for n in nics] == [
        (0, 0, None), *((card, 0, "efa-only") for card in range(1, 17))]
    assert len(nics) == CATALOG.of("p6-b300.48xlarge", Instance).network_cards
    assert all(n["securityGroups"] == ["network-cluster-sg-id"] and n["subnetId"] == nics[0]["subnetId"]
               for n in nics)
    assert rec.one(PG).inputs["strategy"] == "cluster" and template["placement"] == {"groupName": "train-b300-gpu"}
    [head] = rec.one(LT, "compute-head-lt").inputs["networkInterfaces"]
    assert rec.one(LT, "compute-head-lt").inputs["instanceType"] == "m5.8xlarge"
    assert (head["networkCardIndex"], head["deviceIndex"]) == (0, 0) and "interfaceType" not in head
    assert template["name"] == "train-b300-gpu"  # slurmctld launches the 8 nodes from it: no instance here
    assert not [i for i in rec.of_type(INSTANCE) if i.inputs["tags"]["clusterforge:pool"] == "gpu"]


def test_p6_b300_with_fewer_interfaces_starts_at_card_1(stack: Stack, tmp_path: Path) -> None:
    nics = gpu_template(stack(build_blueprint(write(tmp_path, p6_b300(4)))).recorder)["networkInterfaces"]
    assert [(n["networkCardIndex"], n["deviceIndex"], n.get("interfaceType")) for n in nics] == [
        (0, 0, None), (1, 0, "efa-only"), (2, 0, "efa-only"), (3, 0, "efa-only"), (4, 0, "efa-only")]


def test_a_pool_may_use_fewer_interfaces(stack: Stack, tmp_path: Path) -> None:
    expect_layout(gpu_template(stack(build_blueprint(write(tmp_path, lowered_p5(12)))).recorder), 12)


def test_the_controller_has_one_standard_interface(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    [nic] = rec.one(LT, "compute-controller-lt").inputs["networkInterfaces"]
    assert (nic["networkCardIndex"], nic["deviceIndex"]) == (0, 0) and "interfaceType" not in nic


def test_imdsv2_is_required_everywhere(stack: Stack) -> None:
    """IMDSv2 and one hop on every template; only the template slurmctld launches from shows an instance its own
    tags (its node name, userdata_identify)."""
    rec = stack(build_example("aws-p5en")).recorder
    assert len(rec.of_type(LT)) == 2
    imdsv2 = {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1}
    assert rec.one(LT, "compute-head-lt").inputs["metadataOptions"] == imdsv2
    assert gpu_template(rec)["metadataOptions"] == imdsv2 | {"instanceMetadataTags": "enabled"}


def test_root_volume_is_encrypted_on_the_amis_root_device(stack: Stack, tmp_path: Path) -> None:
    data = lowered_p5(32)
    data["pools"][0]["root_volume_gib"] = 1024
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    [gpu] = gpu_template(rec)["blockDeviceMappings"]
    assert gpu["deviceName"] == ROOT_DEVICE
    assert gpu["ebs"] == {"volumeSize": 1024, "volumeType": "gp3", "encrypted": "true",
                          "deleteOnTermination": "true"}
    [controller] = rec.one(LT, "compute-controller-lt").inputs["blockDeviceMappings"]
    assert controller["ebs"]["volumeSize"] == CATALOG.of("m7i.4xlarge", Instance).root_volume_gib
    assert controller["ebs"]["encrypted"] == "true"


def test_a_customer_key_encrypts_the_root_volumes(stack: Stack) -> None:
    key = "arn:aws:kms:us-east-1:111122223333:key/abcd"
    rec = stack(build_example("aws-p5", kms_key_arn=key)).recorder
    assert all(t.inputs["blockDeviceMappings"][0]["ebs"]["kmsKeyId"] == key for t in rec.of_type(LT))


def test_image_from_the_dlami_parameter_or_the_blueprint(stack: Stack, tmp_path: Path) -> None:
    rec = stack(build_example("aws-p5")).recorder
    assert rec.one("aws:imagebuilder/imageRecipe:ImageRecipe").inputs["parentImage"] == DLAMI  # baked from it
    assert {t.inputs["imageId"] for t in rec.of_type(LT)} == {baked_ami("compute-image-nvidia")}
    assert ("aws:ssm/getParameter:getParameter",
            {"name": "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"}
            ) in [(t, {k: v for k, v in a.items() if k == "name"}) for t, a in rec.calls]
    data = example("aws-p5")
    data["aws"]["ami"] = PINNED
    pinned = stack(build_blueprint(write(tmp_path, data))).recorder
    assert {t.inputs["imageId"] for t in pinned.of_type(LT)} == {PINNED}
    assert "aws:ssm/getParameter:getParameter" not in [t for t, _ in pinned.calls]


def test_one_cluster_placement_group_per_efa_pool(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    group = rec.one(PG)
    assert group.inputs["strategy"] == "cluster" and group.inputs["name"] == "nlp-p5-gpu"
    assert gpu_template(rec)["placement"] == {"groupName": "nlp-p5-gpu"}
    assert "placement" not in rec.one(LT, "compute-controller-lt").inputs


def test_capacity_block_is_targeted_not_bought(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    template = gpu_template(rec)
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}
    assert not rec.of_type("aws:ec2/capacityBlockReservation:CapacityBlockReservation")
    controller = rec.one(LT, "compute-controller-lt").inputs
    assert "instanceMarketOptions" not in controller and "capacityReservationSpecification" not in controller


def test_odcr_is_targeted_without_a_market(stack: Stack) -> None:
    template = gpu_template(stack(build_example("aws-p5en")).recorder)
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0fedcba9876543210"}}
    assert "instanceMarketOptions" not in template


def test_on_demand_has_no_capacity_settings(stack: Stack) -> None:
    template = gpu_template(stack(build_example("aws-p6-b200")).recorder)
    assert "capacityReservationSpecification" not in template and "instanceMarketOptions" not in template


def instances(rec: Recorder) -> list[Registered]:
    return rec.of_type(INSTANCE)


@pytest.mark.parametrize(("example_name", "cluster", "gpu_nodes", "controller"), [
    ("aws-p5", "nlp-p5", 64, "controller"), ("aws-p5en", "vision-p5en", 32, "head"),
    ("aws-p6-b200", "research-b200", 16, "controller")])
def test_compute_pools_are_launch_templates_not_instances(stack: Stack, example_name: str, cluster: str,
                                                         gpu_nodes: int, controller: str) -> None:
    """On the baked image the stack runs the controller only; slurmctld launches the GPU nodes from the template
    named as the rendered power-save file asks for it."""
    run = stack(build_example(example_name))
    rec = run.recorder
    assert [i.inputs["tags"]["clusterforge:pool"] for i in instances(rec)] == [controller]
    template = gpu_template(rec)
    assert template["name"] == f"{cluster}-gpu"
    assert {"resourceType": "instance", "tags": {"clusterforge:cluster": cluster, "clusterforge:pool": "gpu",
                                                 "clusterforge:role": "compute"}} in template["tagSpecifications"]
    [entry] = run.value["launch_templates"]
    assert entry == {"pool": "gpu", "name": f"{cluster}-gpu", "launch_template_id": rec.one(LT, "compute-gpu-lt")
                     .outputs["id"], "instance_type": template["instanceType"], "nodes": gpu_nodes}
    assert [n["pool"] for n in run.value["nodes"]] == [controller]


def test_the_pools_user_data_names_no_node_and_identifies_it_at_boot(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    document = yaml.safe_load(base64.b64decode(gpu_template(rec)["userData"]).decode())
    assert "hostname" not in document
    env = document["write_files"][0]["content"]
    assert "SLURM_CONTROLLER_ADDR=10.0.0.14\n" in env and "CLUSTERFORGE_NODE" not in env
    assert document["runcmd"] == [["sh", "-c", "/usr/local/sbin/clusterforge-identify && "
                                   "/usr/local/sbin/clusterforge-boot"]]
    paths = [f["path"] for f in document["write_files"]]
    assert "/etc/clusterforge/inventory/hosts.template.yml" in paths and "/etc/clusterforge/inventory/hosts.yml" \
        not in paths
    identify = next(f["content"] for f in document["write_files"] if f["path"].endswith("clusterforge-identify"))
    assert "after 1800 s;" in identify and "no node map names instance" in identify  # as long as slurmctld waits


def test_a_launched_node_waits_for_its_name_as_long_as_slurmctld_waits_for_it(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["slurm"]["recovery"] = {"resume_timeout_s": 3600}
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    document = yaml.safe_load(base64.b64decode(gpu_template(rec)["userData"]).decode())
    identify = next(f["content"] for f in document["write_files"] if f["path"].endswith("clusterforge-identify"))
    assert "deadline=$(( $(date +%s) + 3600 ))" in identify


def pinned(data: dict[str, Any]) -> dict[str, Any]:
    """The blueprint with `aws.ami` pinned: no baked image, so every pool is one instance per node (a push
    configures them)."""
    data["aws"]["ami"] = PINNED
    return data


def test_instances_are_the_planners_nodes_from_their_pools_template(stack: Stack, tmp_path: Path) -> None:
    rec = stack(build_blueprint(write(tmp_path, pinned(example("aws-p5"))))).recorder
    names = sorted(i.inputs["tags"]["Name"] for i in instances(rec))  # registration order is not creation order
    assert names == ["controller-0001", *(f"gpu-{n:04d}" for n in range(1, 65))]
    assert all(i.name == f"compute-{i.inputs['tags']['Name']}" for i in instances(rec))
    first = rec.named("compute-gpu-0001")
    assert first.inputs["launchTemplate"] == {"id": rec.one(LT, "compute-gpu-lt").outputs["id"], "version": "1"}
    assert (rec.named("compute-controller-0001").inputs["launchTemplate"]["id"]
            == rec.one(LT, "compute-controller-lt").outputs["id"])
    assert "name" not in rec.one(LT, "compute-gpu-lt").inputs  # no resume program asks for it
    assert first.ignore_changes == ["launchTemplate", "userData"]  # an edit never terminates GPU nodes
    assert "subnetId" not in first.inputs and "vpcSecurityGroupIds" not in first.inputs  # all in the template


def test_user_data_joins_each_node_to_the_controller(stack: Stack, tmp_path: Path) -> None:
    rec = stack(build_blueprint(write(tmp_path, pinned(example("aws-p5"))))).recorder
    controller_ip = "10.0.0.14"  # the recorder's first instance address: the controller is built first
    document = yaml.safe_load(rec.named("compute-gpu-0042").inputs["userData"])
    assert document["hostname"] == "gpu-0042"
    assert f"SLURM_CONTROLLER_ADDR={controller_ip}\n" in document["write_files"][0]["content"]
    assert "SLURM_CONTROLLER=controller-0001\n" in document["write_files"][0]["content"]
    own = yaml.safe_load(rec.named("compute-controller-0001").inputs["userData"])
    assert own["hostname"] == "controller-0001"
    assert not any("controller-0001" in " ".join(command) for command in own.get("bootcmd", []))  # no hosts line


def test_node_role_is_ssm_plus_this_clusters_buckets(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["data_bucket"] = "s3://team-datasets/imagenet"
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    role = rec.one("aws:iam/role:Role", "compute-nodes-role").inputs
    assert role["path"] == "/clusterforge/"  # the deploy role's PassRole is scoped to this path
    trust = json.loads(role["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}
    [attachment] = [a for a in rec.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                    if a.inputs["role"] == "compute-nodes-role-auto"]
    assert attachment.inputs["policyArn"] == "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    policy = json.loads(rec.one("aws:iam/rolePolicy:RolePolicy", "compute-nodes-buckets").inputs["policy"])
    resources = {r for s in policy["Statement"] for r in ([s["Resource"]] if isinstance(s["Resource"], str)
                                                          else s["Resource"])}
    bucket = rec.one("aws:s3/bucket:Bucket", "storage-checkpoints-bucket").inputs["bucketPrefix"] + "20261121"
    assert resources == {f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*", "arn:aws:s3:::team-datasets",
                         "arn:aws:s3:::team-datasets/imagenet/*"}
    assert all("*" not in s["Action"] for s in policy["Statement"])
    profile = rec.one("aws:iam/instanceProfile:InstanceProfile", "compute-nodes-profile")
    assert profile.inputs["role"] == "compute-nodes-role-auto" and profile.inputs["path"] == "/clusterforge/"
    arn = "arn:aws:mock:::aws:iam/instanceProfile:InstanceProfile/compute-{}-profile-id"  # the mock's ARN
    assert gpu_template(rec)["iamInstanceProfile"] == {"arn": arn.format("nodes")}
    assert rec.one(LT, "compute-controller-lt").inputs["iamInstanceProfile"] == {"arn": arn.format("controller")}


def test_only_the_controller_may_launch_and_terminate_and_only_this_clusters_instances(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    [power_save] = [p for p in rec.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("power-save")]
    assert power_save.name == "compute-controller-power-save"
    assert power_save.inputs["role"] == "compute-controller-role-id"
    statements = {s["Sid"]: s for s in json.loads(power_save.inputs["policy"])["Statement"]}
    own = {"StringEquals": {"aws:ResourceTag/clusterforge:cluster": "nlp-p5"}}
    assert statements["TerminateOwnInstances"]["Condition"] == own
    assert not [s for s in statements.values() if s["Action"] == "ec2:CreateTags" and "ec2:CreateAction" not in str(
        s.get("Condition"))]  # no tag after launch: names are the batches' maps (NodeMap)
    assert statements["LaunchOnlyThisClustersInstances"] == {
        "Sid": "LaunchOnlyThisClustersInstances", "Effect": "Deny", "Action": "ec2:RunInstances",
        "Resource": "arn:aws:ec2:us-east-1:*:instance/*",
        "Condition": {"StringNotEquals": {"aws:RequestTag/clusterforge:cluster": "nlp-p5"}}}
    assert statements["PassNodeRole"]["Resource"] == "arn:aws:mock:::aws:iam/role:Role/compute-nodes-role-id"
    assert set(statements["Launch"]["Action"]) == {"ec2:CreateFleet", "ec2:RunInstances"}
    node_policies = [json.loads(p.inputs["policy"]) for p in rec.of_type("aws:iam/rolePolicy:RolePolicy")
                     if p.inputs["role"] == "compute-nodes-role-id"]
    assert node_policies and not any(str(s["Action"]).startswith("ec2:") or "ec2:" in str(s["Action"])
                                     for doc in node_policies for s in doc["Statement"])
