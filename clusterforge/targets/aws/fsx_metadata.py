"""FSx for Lustre metadata IOPS AWS accepts, as plain values: the blueprint rule (STO-004) and its CrossGuard
policy share them, so `check` and `pulumi preview` reach one verdict.

AWS FSx API reference, CreateFileSystemLustreMetadataConfiguration, Iops (USER_PROVISIONED mode only): "For SSD
file systems, valid values are 1500, 3000, 6000, 12000, and multiples of 12000 up to a maximum of 192000. For
Intelligent-Tiering file systems, valid values are 6000 and 12000." The metadata configuration belongs to the
PERSISTENT_2 deployment type; in AUTOMATIC mode "you cannot specify a value", and AUTOMATIC mode is "supported only
on SSD file systems" (Mode): an Intelligent-Tiering file system needs its IOPS given.
"""

from __future__ import annotations

from dataclasses import dataclass

PERSISTENT_2 = "PERSISTENT_2"
SSD_STEP = 12_000
SSD_MAX = 192_000
SSD_SMALL = (1_500, 3_000, 6_000)
INTELLIGENT_TIERING = "INTELLIGENT_TIERING"
TIERING_VALUES = (6_000, 12_000)
SOURCE = "AWS FSx API reference, CreateFileSystemLustreMetadataConfiguration (Iops, Mode)"


@dataclass(frozen=True)
class MetadataProblem:
    """Why the metadata IOPS are refused, and what to write instead."""

    message: str
    hint: str


def valid_iops(iops: int, storage_type: str = "SSD") -> bool:
    """Whether CreateFileSystem accepts `iops` for the storage type (SSD's rule for SSD and HDD alike: HDD has
    no PERSISTENT_2 and is refused by STO-002)."""
    if storage_type == INTELLIGENT_TIERING:
        return iops in TIERING_VALUES
    return iops in SSD_SMALL or (0 < iops <= SSD_MAX and iops % SSD_STEP == 0)


def _neighbours(iops: int, storage_type: str) -> list[int]:
    """The valid values just below and just above `iops`, for the hint."""
    values = list(TIERING_VALUES) if storage_type == INTELLIGENT_TIERING else [
        *SSD_SMALL, *range(SSD_STEP, SSD_MAX + 1, SSD_STEP)]
    below = [v for v in values if v < iops][-1:]
    above = [v for v in values if v > iops][:1]
    return below + above


def _rule_text(storage_type: str) -> str:
    if storage_type == INTELLIGENT_TIERING:
        return "Intelligent-Tiering takes 6,000 or 12,000"
    return "SSD takes 1,500, 3,000, 6,000, 12,000 or a multiple of 12,000 up to 192,000"


def metadata_problem(iops: int | None, deployment_type: str, storage_type: str = "SSD",
                     mode: str = "USER_PROVISIONED") -> MetadataProblem | None:
    """None when AWS accepts the metadata IOPS (or none are given where AWS may scale them), else the problem in
    words."""
    if iops is None:
        if storage_type == INTELLIGENT_TIERING and deployment_type == PERSISTENT_2:
            return MetadataProblem(f"{INTELLIGENT_TIERING} storage needs provisioned metadata IOPS: AUTOMATIC mode is "
                                   "for SSD file systems only", "set metadata_iops: 6000 or 12000")
        return None
    if deployment_type != PERSISTENT_2:
        return MetadataProblem(f"{deployment_type} takes no metadata IOPS: only PERSISTENT_2 provisions them",
                               "remove metadata_iops, or use PERSISTENT_2")
    if mode == "AUTOMATIC" and storage_type == INTELLIGENT_TIERING:
        return MetadataProblem(f"{INTELLIGENT_TIERING} storage takes no AUTOMATIC metadata mode (SSD only)",
                               "use mode USER_PROVISIONED with 6,000 or 12,000 IOPS")
    if mode == "AUTOMATIC":
        return MetadataProblem(f"metadata IOPS {iops:,} are given in AUTOMATIC mode, which sets them itself",
                               "use mode USER_PROVISIONED, or give no IOPS")
    if valid_iops(iops, storage_type):
        return None
    choices = " or ".join(f"{v:,}" for v in _neighbours(iops, storage_type))
    return MetadataProblem(f"FSx metadata IOPS {iops:,} is not valid: {_rule_text(storage_type)}",
                           f"use {choices}")
