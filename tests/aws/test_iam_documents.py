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

from clusterforge.targets.aws.boot_access import controller_boot
from clusterforge.targets.aws.policy_documents import power_save_access
from tests.aws.conftest import Run, build_example
from tests.aws.iam_eval import Request, allowed

parliament = pytest.importorskip("parliament")

REGION = "us-east-1"
CLUSTER = "nlp-p5"
NODE_ROLE = "arn:aws:iam::111122223333:role/clusterforge/nlp-p5-nodes"
INSTANCE = f"arn:aws:ec2:{REGION}:111122223333:instance/i-0123456789abcdef0"
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
    document["Statement"][3]["Condition"]["StringEquals"] = {"ec2:NoSuchKey": CLUSTER}
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
