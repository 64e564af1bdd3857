"""The blueprint's aws.security overrides reach the resources (and the SEC rules report them in the PR)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.aws.blueprints import example, write
from tests.aws.conftest import Run, build_blueprint, build_example

LT = "aws:ec2/launchTemplate:LaunchTemplate"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
ATTACH = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
Stack = Callable[..., Run]


def test_defaults_add_nothing(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    assert not [r for r in rec.of_type(INGRESS) if "extra" in r.name]
    assert [r.name for r in rec.of_type(ATTACH) if r.name.startswith("compute-nodes")] == ["compute-nodes-ssm"]


def test_overrides_reach_templates_groups_and_role(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["security"] = {
        "imds_tokens": "optional", "encrypt_root_volumes": False,
        "ingress": [{"cidr": "10.20.0.0/16", "from_port": 22, "to_port": 22, "description": "VPN"}],
        "node_policies": ["arn:aws:iam::123456789012:policy/read-datasets"],
    }
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    for template in rec.of_type(LT):
        assert template.inputs["metadataOptions"]["httpTokens"] == "optional"
        [volume] = template.inputs["blockDeviceMappings"]
        assert volume["ebs"]["encrypted"] == "false"
    [extra] = [r for r in rec.of_type(INGRESS) if "extra" in r.name]
    assert (extra.inputs["cidrIpv4"], extra.inputs["fromPort"], extra.inputs["toPort"]) == ("10.20.0.0/16", 22, 22)
    assert extra.inputs["securityGroupId"] == "network-cluster-sg-id"
    policies = [r for r in rec.of_type(ATTACH) if "extra" in r.name]  # the nodes' role and the controller's
    assert sorted(p.inputs["role"] for p in policies) == ["compute-controller-role-auto", "compute-nodes-role-auto"]
    assert {p.inputs["policyArn"] for p in policies} == {"arn:aws:iam::123456789012:policy/read-datasets"}
