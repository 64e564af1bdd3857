"""Target aws's part of a blueprint: its `aws:` section (region, zones, capacity, security) and the fields its pools
add (EFA interfaces, placement, zone, root volume). The kernel composes them into the blueprint model
(`clusterforge.target_kernel.blueprint_model`); code of this package reads them through `aws_section` and `aws_pool`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from clusterforge.core.validation import expected
from clusterforge.model.base import Strict
from clusterforge.targets.aws.fsx_model import BUCKET, PREFIX

RESERVATION_ID = r"^cr-[0-9a-f]{8,17}$"
ReservationId = Annotated[str, StringConstraints(pattern=RESERVATION_ID), Field(description=expected(
    RESERVATION_ID, "a capacity reservation id, e.g. cr-0123456789abcdef0"))]
AZ_ID = r"^[a-z]{2,5}[0-9]-az[0-9]{1,2}$"
AzId = Annotated[str, StringConstraints(pattern=AZ_ID), Field(description=expected(
    AZ_ID, "an availability zone id (not name), e.g. use1-az4"))]
REGION = r"^[a-z]{2}(-[a-z]+)+-[0-9]$"
Region = Annotated[str, StringConstraints(pattern=REGION), Field(description=expected(
    REGION, "an AWS region, e.g. us-east-1"))]
CIDR = r"^[0-9a-fA-F:.]{2,39}/[0-9]{1,3}$"
Cidr = Annotated[str, StringConstraints(pattern=CIDR), Field(description=expected(
    CIDR, "an IPv4 or IPv6 CIDR block, e.g. 10.20.0.0/16"))]
VPC_CIDR = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$"
VpcCidr = Annotated[str, StringConstraints(pattern=VPC_CIDR), Field(description=expected(
    VPC_CIDR, "an IPv4 CIDR block, e.g. 10.0.0.0/16"))]
AMI = r"^ami-[0-9a-f]{8,17}$"
AmiId = Annotated[str, StringConstraints(pattern=AMI), Field(description=expected(
    AMI, "an AMI id, e.g. ami-0123456789abcdef0"))]
# IAM ARNs (IAM User Guide, "IAM identifiers"): names and paths of letters, digits and +=,.@_- and '/'.
POLICY_ARN = r"^arn:aws[a-z-]*:iam::(aws|[0-9]{12}):policy/[A-Za-z0-9+=,.@_/-]{1,512}$"
PolicyArn = Annotated[str, StringConstraints(pattern=POLICY_ARN), Field(description=expected(
    POLICY_ARN, "an IAM policy ARN, e.g. arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"))]
# Security group rule descriptions (EC2 API, IpRange.Description): up to 255 of a-z, A-Z, 0-9, spaces and
# ._-:/()#,@[]+=;{}!$*
SG_DESCRIPTION = r"^[A-Za-z0-9 ._:/()#,@\[\]+=;{}!$*-]{0,255}$"
SgDescription = Annotated[str, StringConstraints(pattern=SG_DESCRIPTION), Field(description=expected(
    SG_DESCRIPTION, "a security group rule description: up to 255 of letters, digits, spaces and "
    "._-:/()#,@[]+=;{}!$* (EC2's set), e.g. SSH from the VPN"))]
# An S3 bucket name, or a URL with a key prefix (the naming rules are fsx_model.py's)
S3_LOCATION = rf"^(s3://)?{BUCKET}{PREFIX}$"
S3Location = Annotated[str, StringConstraints(pattern=S3_LOCATION), Field(description=expected(
    S3_LOCATION, "an S3 bucket name or s3://bucket/prefix of safe characters, e.g. s3://team-datasets/imagenet"))]


class OnDemand(Strict):
    type: Literal["on-demand"]


class Odcr(Strict):
    """An On-Demand Capacity Reservation the account already holds."""

    type: Literal["odcr"]
    reservation_id: ReservationId


class CapacityBlock(Strict):
    """An EC2 Capacity Block for ML, bought outside Pulumi (a purchase cannot be undone)."""

    type: Literal["capacity-block"]
    reservation_id: ReservationId


Capacity = Annotated[OnDemand | Odcr | CapacityBlock, Field(discriminator="type")]


class Ingress(Strict):
    """Traffic let in to the nodes from outside the cluster (say, SSH from a VPN range to the login node)."""

    cidr: Cidr
    from_port: Annotated[int, Field(ge=0, le=65535)]
    to_port: Annotated[int, Field(ge=0, le=65535)]
    protocol: Literal["tcp", "udp"] = "tcp"
    description: SgDescription = ""


class AwsSecurity(Strict):
    """Overrides of the stack's secure defaults; the SEC rules report every weakening in the PR check."""

    imds_tokens: Literal["required", "optional"] = "required"
    encrypt_root_volumes: bool = True
    ingress: list[Ingress] = []
    node_policies: list[PolicyArn] = []


class Aws(Strict):
    region: Region
    availability_zones: Annotated[list[AzId], Field(min_length=1)]
    vpc_cidr: VpcCidr = "10.0.0.0/16"
    capacity: Capacity = OnDemand(type="on-demand")
    ami: AmiId | None = None
    data_bucket: S3Location | None = None
    security: AwsSecurity = AwsSecurity()


class AwsPool(Strict):
    """What a pool of target aws may say beyond every pool's fields: its EFA interfaces (default: as many as the
    instance type has), its placement (a cluster placement group unless `none`), its zone and root volume."""

    efa_interfaces: Annotated[int, Field(ge=0, le=64)] | None = None
    placement: Literal["cluster", "none"] = "cluster"
    availability_zone: AzId | None = None
    root_volume_gib: Annotated[int, Field(ge=8, le=65536)] | None = None


def aws_section(cluster: Any) -> Aws | None:
    """The blueprint's `aws:` section (None when it has none)."""
    section = getattr(cluster, "aws", None)
    return section if isinstance(section, Aws) else None


def aws_pool(pool: Any) -> AwsPool:
    """A pool's AWS fields as the composed model read them (their defaults on a pool made without them, such as the
    controller pool the stack adds)."""
    return AwsPool.model_construct(**{name: getattr(pool, name, field.default)
                                      for name, field in AwsPool.model_fields.items()})
