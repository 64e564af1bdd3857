"""Every IAM document the stack writes, linted by parliament (actions, ARN forms, each condition key against the
actions it is used with, from AWS's own tables) and asked the requests that matter (tests/aws/iam_eval.py): one
cluster's controller can launch, tag and terminate only instances of its own cluster, and can make the munge key
once but never replace it; a node reads the key and makes nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.targets.aws.boot_access import controller_boot
from clusterforge.targets.aws.policy_documents import LAUNCH_TAG_KEYS, power_save_access
from clusterforge.targets.aws.powersave import Ec2Provider, new_batch_id
from tests.aws.conftest import Run, build_example
from tests.aws.iam_eval import Request, allowed

parliament = pytest.importorskip("parliament")

REGION = "us-east-1"
CLUSTER = "nlp-p5"
NODE_ROLE = "arn:aws:iam::111122223333:role/clusterforge/nlp-p5-nodes"
INSTANCE = f"arn:aws:ec2:{REGION}:111122223333:instance/i-0123456789abcdef0"
VOLUME = f"arn:aws:ec2:{REGION}:111122223333:volume/vol-0123456789abcdef0"
INTERFACE = f"arn:aws:ec2:{REGION}:111122223333:network-interface/eni-0123456789abcdef0"
FLEET = f"arn:aws:ec2:{REGION}:111122223333:fleet/fleet-01234567-89ab-cdef-0123-456789abcdef"
TEMPLATE = f"arn:aws:ec2:{REGION}:111122223333:launch-template/lt-0123456789abcdef0"
MUNGE = f"arn:aws:ssm:{REGION}:111122223333:parameter/clusterforge/{CLUSTER}/munge-key"
# What a least-privilege lint says of statements that are so by design: Describe* and the launch itself take no
# resource-level permission the program could name in advance (EC2's Actions, resources and condition keys page).
EXPECTED = {"RESOURCE_STAR"}


def lint(document: dict[str, Any]) -> list[str]:
    found = parliament.analyze_policy_string(json.dumps(document)).findings
    return [f"{f.issue}: {f.detail}" for f in found if f.issue not in EXPECTED]


def real_arns(text: str) -> str:
    """The mocks' ARNs (`arn:aws:mock:::TYPE/NAME-id`) as AWS writes a role's: what the lint checks forms against."""
    return re.sub(r"arn:aws:mock:::aws:iam/role:Role/([\w-]+)-id", r"arn:aws:iam::111122223333:role/clusterforge/\1",
                  text)


def test_every_document_the_stack_writes_passes_the_lint(stack: Callable[..., Run]) -> None:
    rec = stack(build_example("aws-p5")).recorder
    documents = {p.name: json.loads(real_arns(p.inputs["policy"]))
                 for p in rec.of_type("aws:iam/rolePolicy:RolePolicy")}
    assert "arn:aws:mock" not in json.dumps(documents)
    assert {"compute-controller-power-save", "compute-controller-boot", "compute-nodes-boot"} <= set(documents)
    for name, document in documents.items():
        assert lint(document) == [], name


def test_the_lint_catches_a_condition_key_the_action_does_not_know() -> None:
    document = power_save_access(REGION, CLUSTER, NODE_ROLE)
    [terminate] = [s for s in document["Statement"] if s["Sid"] == "TerminateOwnInstances"]
    terminate["Condition"]["StringEquals"] = {"ec2:NoSuchKey": CLUSTER}
    assert any(line.startswith("UNKNOWN_CONDITION_FOR_ACTION") for line in lint(document))


CONTROLLER = [power_save_access(REGION, CLUSTER, NODE_ROLE), controller_boot(REGION, "boot", CLUSTER, None)]


def tags(**values: str) -> dict[str, Any]:
    """A request's tag context: aws:RequestTag/KEY for each, aws:TagKeys for all (`__` in a name is `:`)."""
    named = {k.replace("__", ":"): v for k, v in values.items()}
    return {**{f"aws:RequestTag/{k}": v for k, v in named.items()}, "aws:TagKeys": list(named)}


@pytest.mark.parametrize(("request_", "ok"), [
    (Request("ec2:RunInstances", INSTANCE, tags(clusterforge__cluster=CLUSTER, clusterforge__pool="gpu")), True),
    (Request("ec2:RunInstances", INSTANCE, tags(clusterforge__cluster="vision")), False),  # planted for another
    (Request("ec2:RunInstances", INSTANCE, tags(clusterforge__pool="gpu")), False),  # untagged: nobody's
    (Request("ec2:CreateTags", INSTANCE, {"ec2:CreateAction": "CreateFleet", **tags(clusterforge__cluster=CLUSTER)}),
     True),
    (Request("ec2:CreateTags", INSTANCE, {"ec2:CreateAction": "CreateFleet", **tags(clusterforge__cluster="vision")}),
     False),
    (Request("ec2:CreateTags", INSTANCE, {"aws:ResourceTag/clusterforge:cluster": CLUSTER,  # no tag after launch
                                          **tags(clusterforge__node="gpu-0001", Name="gpu-0001")}), False),
    (Request("s3:PutObject", "arn:aws:s3:::boot/node-map/0123456789abcdef.json"), True),  # a batch's names
    (Request("s3:PutObject", "arn:aws:s3:::boot/node-config.tar.gz"), False),  # what every node runs at boot
    (Request("ec2:CreateTags", INSTANCE, {"aws:ResourceTag/clusterforge:cluster": CLUSTER,  # re-label its own
                                          **tags(clusterforge__cluster="vision")}), False),
    (Request("ec2:CreateTags", INSTANCE, {"aws:ResourceTag/clusterforge:cluster": "vision",  # name another's
                                          **tags(clusterforge__node="gpu-0001")}), False),
    (Request("ec2:TerminateInstances", INSTANCE, {"aws:ResourceTag/clusterforge:cluster": CLUSTER}), True),
    (Request("ec2:TerminateInstances", INSTANCE, {"aws:ResourceTag/clusterforge:cluster": "vision"}), False),
    (Request("ssm:PutParameter", MUNGE, {"ssm:Overwrite": "false"}), True),
    (Request("ssm:PutParameter", MUNGE, {"ssm:Overwrite": "true"}), False),  # never replace the cluster's key
    (Request("ssm:PutParameter", MUNGE.replace(CLUSTER, "vision"), {"ssm:Overwrite": "false"}), False),
    (Request("ssm:GetParameter", MUNGE), True),
    (Request("ssm:GetParameter", MUNGE.replace(CLUSTER, "vision")), False),
])
def test_a_controller_acts_on_its_own_cluster_only(request_: Request, ok: bool) -> None:
    assert allowed(CONTROLLER, request_) is ok, request_


BATCH = "0123456789abcdef"
OWN_TEMPLATE = {"aws:ResourceTag/clusterforge:cluster": CLUSTER}
AT_FLEET = {"ec2:CreateAction": "CreateFleet"}


@pytest.mark.parametrize(("request_", "ok"), [
    pytest.param(Request("ec2:CreateFleet", INSTANCE, tags(clusterforge__cluster="vision", clusterforge__group="gpu",
                                                          clusterforge__batch=BATCH)), False, id="fleet-other-cluster"),
    pytest.param(Request("ec2:CreateFleet", INSTANCE, tags(clusterforge__group="gpu", clusterforge__batch=BATCH)),
                 False, id="fleet-no-cluster-tag"),
    pytest.param(Request("ec2:CreateFleet", INSTANCE, tags(clusterforge__cluster=CLUSTER, clusterforge__group="gpu",
                                                          clusterforge__batch=BATCH, Name="gpu-0001")),
                 False, id="fleet-extra-key"),
    pytest.param(Request("ec2:RunInstances", INSTANCE, tags(clusterforge__cluster=CLUSTER,
                                                           clusterforge__node="gpu-0001")), False, id="run-extra-key"),
    pytest.param(Request("ec2:RunInstances", INTERFACE, tags(clusterforge__cluster=CLUSTER, owner="vision")),
                 False, id="interface-extra-key"),
    pytest.param(Request("ec2:RunInstances", VOLUME, tags(clusterforge__cluster="vision")), False,
                 id="volume-other-cluster"),
    pytest.param(Request("ec2:CreateFleet", FLEET, tags(clusterforge__cluster="vision")), False,
                 id="fleet-resource-other-cluster"),
    pytest.param(Request("ec2:CreateFleet", TEMPLATE, {"aws:ResourceTag/clusterforge:cluster": "vision"}), False,
                 id="fleet-other-clusters-template"),
    pytest.param(Request("ec2:RunInstances", TEMPLATE), False, id="run-untagged-template"),
    pytest.param(Request("ec2:CreateTags", INSTANCE, {**AT_FLEET, **tags(
        clusterforge__cluster=CLUSTER, clusterforge__group="gpu", clusterforge__batch=BATCH, Name="gpu-0001")}),
        False, id="tag-at-launch-extra-key"),
    pytest.param(Request("ec2:CreateTags", VOLUME, {"ec2:CreateAction": "RunInstances",
                                                    **tags(clusterforge__pool="gpu")}), False,
                 id="tag-at-launch-no-cluster-tag"),
    pytest.param(Request("ec2:CreateTags", FLEET, {**AT_FLEET, **tags(clusterforge__cluster="vision")}), False,
                 id="tag-fleet-other-cluster"),
    pytest.param(Request("ec2:CreateTags", INSTANCE, {"aws:ResourceTag/clusterforge:cluster": "vision",
                                                      **tags(clusterforge__cluster=CLUSTER)}), False,
                 id="tag-other-clusters-instance-as-ours"),
])
def test_a_controller_launches_and_tags_with_this_clusters_tag_and_keys_only(request_: Request, ok: bool) -> None:
    """Another cluster's tag value, a key outside what the program and the templates tag, a launch without this
    cluster's tag, another cluster's (or an untagged) launch template, or a tag on an existing resource: refused."""
    assert allowed(CONTROLLER, request_) is ok, request_


def launch_templates(run: Run) -> list[dict[str, Any]]:
    """The stack's templates that slurmctld launches from (the named ones: the resume program asks for them)."""
    return [t.inputs for t in run.recorder.of_type("aws:ec2/launchTemplate:LaunchTemplate") if t.inputs.get("name")]


def test_the_templates_tag_only_keys_a_launch_may_carry_and_are_this_clusters(stack: Callable[..., Run]) -> None:
    templates = launch_templates(stack(build_example("aws-p5")))
    assert templates
    for template in templates:
        assert template["tags"]["clusterforge:cluster"] == CLUSTER  # LaunchOnlyThisClustersTemplates lets it
        for spec in template["tagSpecifications"]:
            assert set(spec["tags"]) <= set(LAUNCH_TAG_KEYS), spec
            assert spec["tags"]["clusterforge:cluster"] == CLUSTER, spec


@pytest.mark.parametrize("template_tags_count", [False, True], ids=["request-tags-only", "with-template-tags"])
def test_the_resume_programs_real_launch_is_allowed(stack: Callable[..., Run], template_tags_count: bool) -> None:
    """The CreateFleet request Ec2Provider builds, against the stack's own template, asked as EC2 authorizes it:
    CreateFleet on the fleet, its instances and the template, the `instant` fleet's RunInstances as the caller, and
    CreateTags for every resource tagged at launch; whether or not EC2 counts the template's tag specifications as
    the request's tags."""
    [template] = [t for t in launch_templates(stack(build_example("aws-p5"))) if t["name"] == f"{CLUSTER}-gpu"]
    config = PowerSaveConfig(cluster=CLUSTER, provider="aws", region=REGION, groups=(NodeGroup(
        name="gpu", nodes="gpu-[0001-0064]", launch={"launch_template": template["name"],
                                                      "instance_type": "p5.48xlarge"}),))
    request = Ec2Provider(config, ec2=object())._request(config.groups[0], 64, 64, new_batch_id())
    assert request["Type"] == "instant"
    asked = {spec["ResourceType"]: {t["Key"]: t["Value"] for t in spec["Tags"]}
             for spec in request["TagSpecifications"]}
    from_template = {spec["resourceType"]: spec["tags"] for spec in template["tagSpecifications"]}
    arns = {"instance": INSTANCE, "volume": VOLUME, "network-interface": INTERFACE, "fleet": FLEET}
    launched = {kind: {**(from_template.get(kind, {}) if template_tags_count else {}), **asked.get(kind, {})}
                for kind in arns}
    assert launched["instance"]["clusterforge:cluster"] == CLUSTER
    template_tags = {f"aws:ResourceTag/{k}": v for k, v in template["tags"].items()}

    def context(kind: str) -> dict[str, Any]:
        named = launched[kind]
        return {**{f"aws:RequestTag/{k}": v for k, v in named.items()}, "aws:TagKeys": list(named)} if named else {}

    requests = [Request(action, TEMPLATE, template_tags) for action in ("ec2:CreateFleet", "ec2:RunInstances")]
    requests += [Request("ec2:CreateFleet", arns[kind], context(kind)) for kind in ("fleet", "instance")]
    requests += [Request("ec2:RunInstances", arns[kind], context(kind))
                 for kind in ("instance", "volume", "network-interface")]
    requests += [Request("ec2:CreateTags", arns[kind], {"ec2:CreateAction": action, **context(kind)})
                 for kind in arns if launched[kind] for action in ("CreateFleet", "RunInstances")]
    assert [r for r in requests if not allowed(CONTROLLER, r)] == []


def test_a_node_reads_the_key_and_makes_nothing(stack: Callable[..., Run]) -> None:
    rec = stack(build_example("aws-p5")).recorder
    node = [json.loads(p.inputs["policy"]) for p in rec.of_type("aws:iam/rolePolicy:RolePolicy")
            if p.inputs["role"] == "compute-nodes-role-id"]
    assert allowed(node, Request("ssm:GetParameter", MUNGE))
    assert not allowed(node, Request("ssm:PutParameter", MUNGE, {"ssm:Overwrite": "false"}))
    assert not allowed(node, Request("ec2:RunInstances", INSTANCE, tags(clusterforge__cluster=CLUSTER)))
    [boot] = [s for d in node for s in d["Statement"] if s.get("Sid") == "NodeConfig"]
    bucket = boot["Resource"][0].rsplit("/", 1)[0]
    assert allowed(node, Request("s3:GetObject", f"{bucket}/node-map/0123456789abcdef.json"))  # its name
    assert not allowed(node, Request("s3:PutObject", f"{bucket}/node-map/0123456789abcdef.json"))
