"""FSx for Lustre: the managed Lustre a cloud stack creates, one of the two forms of `storage.lustre`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

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
