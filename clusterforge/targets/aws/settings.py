"""What the stack reads from its Pulumi config, as one typed value (the program never reads config itself)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem

PROJECT = "clusterforge-aws"
STACK_CONFIG = "stack config"  # where a Problem with a setting points: a key of Pulumi.<stack>.yaml
# AWS Deep Learning Base OSS AMI (NVIDIA driver, CUDA, EFA, NCCL, aws-ofi-nccl preinstalled) for x86_64.
# Resolved at deploy time; pin `aws.ami` in the blueprint for production so replacement nodes match.
DLAMI_PARAMETER = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
DEFAULT_ARCHITECTURE = "x86_64"  # the catalog's default (instance.Ec2Instance.architecture)
# The architecture in AWS's public SSM parameters for base images: a path segment or a name's last part, `x86_64`
# (DLAMI /aws/service/deeplearning/ami/x86_64/..., AL2023 .../al2023-ami-kernel-default-x86_64) or `amd64`
# (Debian /aws/service/debian/release/12/latest/amd64, Ubuntu /aws/service/canonical/ubuntu/server/22.04/stable/
# current/amd64/hvm/ebs-gp2/ami-id); each has an arm64 twin of the same path with `arm64` there.
X86_IN_PARAMETER = re.compile(r"(?<=[/-])(x86_64|amd64)(?=/|$)")
# A catalog key, not a figure: the SLURM controller a blueprint without a `role: controller` pool gets.
DEFAULT_CONTROLLER_TYPE = "m7i.4xlarge"
DEFAULT_CONTROLLER_POOL = "controller"
# The Image Builder instance that bakes the node image (no GPU needed: drivers build against the kernel, not the
# device). 8 vCPUs for the compile steps. c7i is offered in most commercial regions [U: not checked region by
# region]; a stack in a region without it sets `imageInstanceType`.
DEFAULT_IMAGE_INSTANCE_TYPE = "c7i.2xlarge"
# An image is built on its own architecture: arm64 images on Graviton3, the same size [U: region by region].
DEFAULT_IMAGE_INSTANCE_TYPE_ARM64 = "c7g.2xlarge"


@dataclass(frozen=True)
class StackSettings:
    """Stack config (namespace `clusterforge-aws`); paths are resolved against the Pulumi project directory."""

    blueprint: Path
    catalogs: tuple[Path, ...] = ()  # site hardware and software catalogs, as `check --catalog`
    policy_config: Path | None = None
    waivers: Path | None = None
    nat_gateway: bool = False  # endpoints only by default: see docs/aws.md "Network egress"
    # The private subnets reach package repositories without the stack's NAT gateway (a mirror or proxy in the
    # VPC, a route through a transit gateway): the image bake may run without natGateway (bake.check_route).
    package_mirror: bool = False
    kms_key_arn: str | None = None  # customer-managed key for EBS, FSx and the checkpoint bucket
    controller_instance_type: str = DEFAULT_CONTROLLER_TYPE
    ami_parameter: str = DLAMI_PARAMETER
    protect_data: bool = True  # `protect` the file system and the checkpoint bucket against `pulumi destroy`
    image_instance_type: str = DEFAULT_IMAGE_INSTANCE_TYPE  # bakes the node image when the blueprint pins no AMI
    ami_parameter_arm64: str | None = None  # the arm64 pools' parent; None: `ami_parameter`'s arm64 twin
    image_instance_type_arm64: str = DEFAULT_IMAGE_INSTANCE_TYPE_ARM64
    # A hybrid only (docs/hybrid.md): the on-prem controller's address as the cloud nodes reach it over the link;
    # their user data puts it in /etc/hosts. Unset, they look the controller's name up in DNS.
    controller_address: str | None = None

    def parent_parameter(self, architecture: str) -> str:
        """The SSM parameter naming the base image of `architecture`'s pools: `amiParameter` for x86_64; for arm64
        `amiParameterArm64`, else `amiParameter` with its architecture part made `arm64`."""
        if architecture == DEFAULT_ARCHITECTURE:
            return self.ami_parameter
        if self.ami_parameter_arm64 is not None:
            return self.ami_parameter_arm64
        twin, found = X86_IN_PARAMETER.subn(architecture, self.ami_parameter)
        if found != 1:
            raise ClusterforgeError(Problem(
                f"amiParameter {self.ami_parameter!r} names no architecture to make {architecture}, and the "
                f"blueprint has {architecture} pools", STACK_CONFIG, path="amiParameterArm64",
                hint=f"set amiParameterArm64 to the SSM parameter of the {architecture} base image"))
        return twin

    def build_instance_type(self, architecture: str) -> str:
        """The Image Builder instance that bakes an image of `architecture` (it runs the image's own binaries)."""
        return self.image_instance_type if architecture == DEFAULT_ARCHITECTURE else self.image_instance_type_arm64
