"""What the stack reads from its Pulumi config, as one typed value (the program never reads config itself)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROJECT = "clusterforge-aws"
# AWS Deep Learning Base OSS AMI (NVIDIA driver, CUDA, EFA, NCCL, aws-ofi-nccl preinstalled) for x86_64.
# Resolved at deploy time; pin `aws.ami` in the blueprint for production so replacement nodes match.
DLAMI_PARAMETER = "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"
# A catalog key, not a figure: the SLURM controller a blueprint without a `role: controller` pool gets.
DEFAULT_CONTROLLER_TYPE = "m7i.4xlarge"
DEFAULT_CONTROLLER_POOL = "controller"
# The Image Builder instance that bakes the node image (no GPU needed: drivers build against the kernel, not the
# device). 8 vCPUs for the compile steps. c7i is offered in most commercial regions [U: not checked region by
# region]; a stack in a region without it sets `imageInstanceType`.
DEFAULT_IMAGE_INSTANCE_TYPE = "c7i.2xlarge"


@dataclass(frozen=True)
class StackSettings:
    """Stack config (namespace `clusterforge-aws`); paths are resolved against the Pulumi project directory."""

    blueprint: Path
    catalogs: tuple[Path, ...] = ()  # site hardware and software catalogs, as `check --catalog`
    policy_config: Path | None = None
    waivers: Path | None = None
    nat_gateway: bool = False  # endpoints only by default: see docs/aws.md "Network egress"
    kms_key_arn: str | None = None  # customer-managed key for EBS, FSx and the checkpoint bucket
    controller_instance_type: str = DEFAULT_CONTROLLER_TYPE
    ami_parameter: str = DLAMI_PARAMETER
    protect_data: bool = True  # `protect` the file system and the checkpoint bucket against `pulumi destroy`
    image_instance_type: str = DEFAULT_IMAGE_INSTANCE_TYPE  # bakes the node image when the blueprint pins no AMI
    # A hybrid only (docs/hybrid.md): the on-prem controller's address as the cloud nodes reach it over the link;
    # their user data puts it in /etc/hosts. Unset, they look the controller's name up in DNS.
    controller_address: str | None = None
