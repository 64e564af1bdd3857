"""FSx for Lustre: the managed Lustre target aws's stack creates, the form of `storage.lustre` it adds to the
blueprint (its `BlueprintPart.lustre`), told apart from an existing file system by the keys only it has."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StringConstraints, model_validator

from clusterforge.core.text import MountPath
from clusterforge.core.validation import expected
from clusterforge.model.base import Strict

# S3 bucket names (S3 User Guide, "General purpose bucket naming rules"): 3 to 63 of lowercase letters,
# digits, '.' and '-', starting and ending with a letter or digit; key prefixes of the "safe characters"
# letters, digits and !-_. with '/' between them.
BUCKET = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
PREFIX = r"(/[A-Za-z0-9!_./-]{0,1000})?"
S3_URL = rf"^s3://{BUCKET}{PREFIX}$"
S3Url = Annotated[str, StringConstraints(pattern=S3_URL), Field(description=expected(
    S3_URL, "an s3://bucket[/prefix] URL of safe characters, e.g. s3://team-datasets/imagenet"))]


DeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]
StorageType = Literal["SSD", "HDD", "INTELLIGENT_TIERING"]
ELASTIC = "INTELLIGENT_TIERING"  # storage that grows and shrinks with the data: no capacity to provision
SCRATCH_BASELINE_MB_S_PER_TIB = 200  # SCRATCH_1/2 baseline throughput (AWS FSx performance docs)


class ReadCache(Strict):
    """The SSD read cache of an Intelligent-Tiering file system (AWS FSx API, LustreReadCacheConfiguration):
    sized by AWS in proportion to the throughput capacity, a size of the blueprint's (`size_gib`, with
    USER_PROVISIONED), or none. The sizes AWS accepts are STO-002's to judge."""

    sizing_mode: Literal["PROPORTIONAL_TO_THROUGHPUT_CAPACITY", "USER_PROVISIONED", "NO_CACHE"] = (
        "PROPORTIONAL_TO_THROUGHPUT_CAPACITY")
    size_gib: Annotated[int, Field(ge=0, le=100_000_000)] | None = None


class FsxLustre(Strict):
    """FSx for Lustre created by the AWS stack.

    SSD and HDD file systems are provisioned by size (`capacity_gib`) and throughput per TiB
    (`throughput_mb_s_per_tib`). An Intelligent-Tiering one (`storage_type: INTELLIGENT_TIERING`, PERSISTENT_2
    only) has no size to set, its storage is elastic: it is provisioned by total throughput
    (`throughput_capacity_mb_s`), metadata IOPS and an SSD read cache (`read_cache`). Which values AWS accepts is
    the STO rules' to judge; here only what cannot be a file system at all is refused."""

    CLIENT_KIND: ClassVar[str] = "fsx"  # the lustre_client role's kind: it mounts the file system's DNS name

    mount: MountPath = "/fsx"
    capacity_gib: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    deployment_type: DeploymentType
    throughput_mb_s_per_tib: int | None = None
    throughput_capacity_mb_s: Annotated[int, Field(ge=1, le=100_000_000)] | None = None
    storage_type: StorageType = "SSD"
    read_cache: ReadCache | None = None
    data_compression: Literal["LZ4", "NONE"] = "LZ4"
    lustre_version: Literal["2.10", "2.12", "2.15"] = "2.15"
    metadata_iops: Annotated[int, Field(ge=1500, le=192_000)] | None = None
    import_path: S3Url | None = None

    @model_validator(mode="after")
    def _sized_unless_elastic(self) -> FsxLustre:
        if self.capacity_gib is None and not self.elastic:
            raise ValueError(f"capacity_gib is required for {self.storage_type} storage (only INTELLIGENT_TIERING "
                             "storage is elastic and takes none)")
        return self

    @property
    def elastic(self) -> bool:
        """Intelligent-Tiering: storage that follows the data, provisioned by throughput instead of size."""
        return self.storage_type == ELASTIC

    @property
    def capacity_tib(self) -> float | None:
        """The provisioned size in TiB; None for elastic storage, which has none."""
        return None if self.capacity_gib is None else self.capacity_gib / 1024

    @property
    def write_gb_s(self) -> float | None:
        """Aggregate write bandwidth (STO-003): TiB × MB/s/TiB ÷ 1000, or an Intelligent-Tiering file system's
        throughput capacity ÷ 1000 (it has no size); None when neither is known."""
        if self.elastic or self.capacity_tib is None:
            return self.throughput_capacity_mb_s / 1000 if self.throughput_capacity_mb_s else None
        return self.capacity_tib * (self.throughput_mb_s_per_tib or SCRATCH_BASELINE_MB_S_PER_TIB) / 1000
