"""AWS-specific blueprint sections: region, AZs, capacity targeting and FSx for Lustre."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from clusterforge.model.base import Strict
from clusterforge.model.text import MountPath
from clusterforge.validation import expected

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
# S3 bucket names (S3 User Guide, "General purpose bucket naming rules"): 3 to 63 of lowercase letters,
# digits, '.' and '-', starting and ending with a letter or digit; key prefixes of the "safe characters"
# letters, digits and !-_. with '/' between them.
_BUCKET = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_PREFIX = r"(/[A-Za-z0-9!_./-]{0,1000})?"
S3_LOCATION = rf"^(s3://)?{_BUCKET}{_PREFIX}$"
S3Location = Annotated[str, StringConstraints(pattern=S3_LOCATION), Field(description=expected(
    S3_LOCATION, "an S3 bucket name or s3://bucket/prefix of safe characters, e.g. s3://team-datasets/imagenet"))]
S3_URL = rf"^s3://{_BUCKET}{_PREFIX}$"
S3Url = Annotated[str, StringConstraints(pattern=S3_URL), Field(description=expected(
    S3_URL, "an s3://bucket[/prefix] URL of safe characters, e.g. s3://team-datasets/imagenet"))]


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


DeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]


class FsxLustre(Strict):
    """FSx for Lustre created by the AWS stack."""

    mount: MountPath = "/fsx"
    capacity_gib: Annotated[int, Field(ge=1, le=100_000_000)]
    deployment_type: DeploymentType
    throughput_mb_s_per_tib: int | None = None
    storage_type: Literal["SSD", "HDD"] = "SSD"
    data_compression: Literal["LZ4", "NONE"] = "LZ4"
    lustre_version: Literal["2.10", "2.12", "2.15"] = "2.15"
    metadata_iops: Annotated[int, Field(ge=1500, le=192_000)] | None = None
    import_path: S3Url | None = None

    @property
    def capacity_tib(self) -> float:
        return self.capacity_gib / 1024
