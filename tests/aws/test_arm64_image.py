"""An arm64 pool gets a node image of its own, baked on an arm64 build instance from the arm64 twin of the base
AMI parameter; the x86_64 pools keep theirs, under the same names as before. The catalog says which types are
arm64 (`architecture`, default x86_64)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.targets.aws.settings import DLAMI_PARAMETER, StackSettings
from tests.aws.blueprints import example, write
from tests.aws.conftest import DLAMI, DLAMI_ARM64, EXAMPLES, PINNED, Run, baked_ami, run_main

Stack = Callable[..., Run]
LT = "aws:ec2/launchTemplate:LaunchTemplate"
RECIPE = "aws:imagebuilder/imageRecipe:ImageRecipe"
INFRA = "aws:imagebuilder/infrastructureConfiguration:InfrastructureConfiguration"
IMAGE = "aws:imagebuilder/image:Image"
GET_PARAMETER = "aws:ssm/getParameter:getParameter"
ARM64_DLAMI = "/aws/service/deeplearning/ami/arm64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"


def arm64_controller(stack: Stack, **config: str) -> Run:
    """aws-p5 (x86_64 GPU nodes) with a Graviton controller (m7g.4xlarge, arm64 in the catalog)."""
    return stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "controllerInstanceType": "m7g.4xlarge",
                           **config}))


def test_an_arm64_pool_gets_an_arm64_parent_and_build(stack: Stack) -> None:
    rec = arm64_controller(stack).recorder
    assert sorted(i.name for i in rec.of_type(IMAGE)) == ["compute-image-cpu-arm64", "compute-image-nvidia"]
    parents = {r.name: r.inputs["parentImage"] for r in rec.of_type(RECIPE)}
    assert parents == {"compute-image-nvidia-recipe": DLAMI, "compute-image-cpu-arm64-recipe": DLAMI_ARM64}
    asked = [args["name"] for token, args in rec.calls if token == GET_PARAMETER]
    assert sorted(asked) == sorted([DLAMI_PARAMETER, ARM64_DLAMI])
    builds = {r.name: r.inputs["instanceTypes"] for r in rec.of_type(INFRA)}
    assert builds == {"compute-image-infrastructure": ["c7i.2xlarge"],
                      "compute-image-infrastructure-arm64": ["c7g.2xlarge"]}
    arm64_build = rec.one(IMAGE, "compute-image-cpu-arm64").inputs["infrastructureConfigurationArn"]
    assert arm64_build.endswith("/compute-image-infrastructure-arm64-id")
    images = {r.name: r.inputs["imageId"] for r in rec.of_type(LT)}
    assert images == {"compute-controller-lt": baked_ami("compute-image-cpu-arm64"),
                      "compute-gpu-lt": baked_ami("compute-image-nvidia")}
    assert rec.one(LT, "compute-controller-lt").inputs["instanceType"] == "m7g.4xlarge"


def test_the_arm64_parent_and_build_follow_the_stack_config(stack: Stack) -> None:
    rec = arm64_controller(stack, amiParameterArm64="/aws/service/debian/release/12/latest/arm64",
                           imageInstanceTypeArm64="c8g.2xlarge").recorder
    asked = [args["name"] for token, args in rec.calls if token == GET_PARAMETER]
    assert "/aws/service/debian/release/12/latest/arm64" in asked and ARM64_DLAMI not in asked
    assert rec.one(INFRA, "compute-image-infrastructure-arm64").inputs["instanceTypes"] == ["c8g.2xlarge"]


def test_an_all_x86_cluster_has_one_parent_and_one_build(stack: Stack) -> None:
    rec = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml")})).recorder
    assert [r.name for r in rec.of_type(INFRA)] == ["compute-image-infrastructure"]
    assert [args["name"] for token, args in rec.calls if token == GET_PARAMETER] == [DLAMI_PARAMETER]


@pytest.mark.parametrize(("x86", "arm64"), [
    (DLAMI_PARAMETER, ARM64_DLAMI),
    ("/aws/service/debian/release/12/latest/amd64", "/aws/service/debian/release/12/latest/arm64"),
    ("/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64",
     "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-arm64"),
    ("/aws/service/canonical/ubuntu/server/22.04/stable/current/amd64/hvm/ebs-gp2/ami-id",
     "/aws/service/canonical/ubuntu/server/22.04/stable/current/arm64/hvm/ebs-gp2/ami-id"),
])
def test_the_arm64_twin_of_a_public_parameter(x86: str, arm64: str) -> None:
    settings = StackSettings(Path("bp.yaml"), ami_parameter=x86)
    assert settings.parent_parameter("x86_64") == x86 and settings.parent_parameter("arm64") == arm64


def test_a_parameter_without_an_architecture_needs_its_arm64_twin_named(stack: Stack) -> None:
    with pytest.raises(ClusterforgeError, match="set amiParameterArm64"):
        StackSettings(Path("bp.yaml"), ami_parameter="/acme/golden-ami").parent_parameter("arm64")
    # asked only where an arm64 pool needs it
    stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "amiParameter": "/acme/golden-ami"}))
    refused = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "controllerInstanceType": "m7g.4xlarge",
                              "amiParameter": "/acme/golden-ami"}), expect_error=True)
    assert "stack config: amiParameterArm64: amiParameter '/acme/golden-ami' names no architecture" in str(
        refused.error)


def test_a_pinned_ami_cannot_boot_two_architectures(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["ami"] = PINNED
    refused = stack(run_main({"blueprint": str(write(tmp_path, data)), "controllerInstanceType": "m7g.4xlarge"}),
                    expect_error=True)
    assert "aws.ami: aws.ami is one image, but the pools run on 2 CPU architectures (arm64: controller; " \
           "x86_64: gpu)" in str(refused.error)
