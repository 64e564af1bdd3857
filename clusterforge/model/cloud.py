"""AWS-specific blueprint sections: region, AZs, capacity targeting and FSx for Lustre."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from clusterforge.model.base import Strict

ReservationId = Annotated[str, StringConstraints(pattern=r"^cr-[0-9a-f]{8,17}$")]
AzId = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,5}[0-9]-az[0-9]{1,2}$")]


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

    cidr: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F:.]+/\d{1,3}$")]
    from_port: Annotated[int, Field(ge=0, le=65535)]
    to_port: Annotated[int, Field(ge=0, le=65535)]
    protocol: Literal["tcp", "udp"] = "tcp"
    description: str = ""


class AwsSecurity(Strict):
    """Overrides of the stack's secure defaults; the SEC rules report every weakening in the PR check."""

    imds_tokens: Literal["required", "optional"] = "required"
    encrypt_root_volumes: bool = True
    ingress: list[Ingress] = []
    node_policies: list[Annotated[str, StringConstraints(pattern=r"^arn:aws[a-z-]*:iam::(aws|\d{12}):policy/.+$")]] = []


class Aws(Strict):
    region: Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9]$")]
    availability_zones: Annotated[list[AzId], Field(min_length=1)]
    vpc_cidr: Annotated[str, StringConstraints(pattern=r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$")] = "10.0.0.0/16"
    capacity: Capacity = OnDemand(type="on-demand")
    ami: Annotated[str, StringConstraints(pattern=r"^ami-[0-9a-f]{8,17}$")] | None = None
    data_bucket: str | None = None
    security: AwsSecurity = AwsSecurity()


DeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]


class FsxLustre(Strict):
    """FSx for Lustre created by the AWS stack."""

    mount: str = "/fsx"
    capacity_gib: Annotated[int, Field(ge=1, le=100_000_000)]
    deployment_type: DeploymentType
    throughput_mb_s_per_tib: int | None = None
    storage_type: Literal["SSD", "HDD"] = "SSD"
    data_compression: Literal["LZ4", "NONE"] = "LZ4"
    lustre_version: Literal["2.10", "2.12", "2.15"] = "2.15"
    metadata_iops: Annotated[int, Field(ge=1500, le=192_000)] | None = None
    import_path: str | None = None

    @property
    def capacity_tib(self) -> float:
        return self.capacity_gib / 1024
