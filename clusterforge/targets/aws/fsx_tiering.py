"""FSx for Lustre Intelligent-Tiering limits AWS accepts, as plain values: the blueprint rules (STO-001, STO-002,
STO-004) and their CrossGuard policies share them.

An Intelligent-Tiering file system has no size: its storage "automatically grows and shrinks" with the data (FSx
for Lustre User Guide, Performance characteristics of Intelligent-Tiering storage class). It is provisioned by
throughput for the whole file system instead of per TiB: "Valid values are 4000 MBps or multiples of 4000 MBps"
(FSx API reference, CreateFileSystemLustreConfiguration ThroughputCapacity), "up to a maximum of 2,000,000 MBps"
(User Guide, Managing provisioned throughput capacity; the API model's ThroughputCapacityMbps: min 4000, max
2000000). `StorageType` INTELLIGENT_TIERING "is only available ... for Lustre file systems with the Persistent_2
deployment type" (CreateFileSystem StorageType). Its DataReadCacheConfiguration is "Required when StorageType is
set to INTELLIGENT_TIERING" and a USER_PROVISIONED cache takes "a minimum of 32 GiB and maximum of 131072 GiB ...
for every 4,000 MB/s of throughput capacity provisioned" (LustreReadCacheConfiguration SizeGiB). Its metadata IOPS
are fsx_metadata.py's. Read 2026-11-26 in the API model botocore 1.44.5 ships and the pages named.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.targets.aws.fsx_model import FsxLustre

TIERING = "INTELLIGENT_TIERING"
DEPLOYMENT = "PERSISTENT_2"
STEP_MB_S = 4_000
MAX_MB_S = 2_000_000
CACHE_GIB_PER_STEP = (32, 131_072)  # SSD read cache per 4,000 MB/s of throughput capacity: least, most
PROPORTIONAL, USER_PROVISIONED, NO_CACHE = "PROPORTIONAL_TO_THROUGHPUT_CAPACITY", "USER_PROVISIONED", "NO_CACHE"
CACHE_MODES = (PROPORTIONAL, USER_PROVISIONED, NO_CACHE)
SOURCE = ("AWS FSx API reference: CreateFileSystem StorageType, CreateFileSystemLustreConfiguration "
          "ThroughputCapacity and DataReadCacheConfiguration, LustreReadCacheConfiguration; FSx for Lustre User "
          "Guide, Managing provisioned throughput capacity")


@dataclass(frozen=True)
class TieringProblem:
    """A problem of an Intelligent-Tiering setting; `field` names the blueprint field it is about (None: the file
    system as a whole)."""

    field: str | None
    message: str
    hint: str


def capacity_refused(gib: int | None) -> TieringProblem | None:
    """STO-001 on Intelligent-Tiering: no storage capacity is accepted, whatever its size."""
    if gib is None:
        return None
    return TieringProblem("capacity", f"FSx capacity {gib:,} GiB is not accepted: {TIERING} storage is elastic "
                          "(it grows and shrinks with the data), so the file system takes no storage capacity",
                          "remove capacity_gib; size it by throughput_capacity_mb_s")


def _steps(throughput: int) -> str:
    """The valid throughputs next to `throughput`: the steps below and above it, within 4,000 to 2,000,000."""
    below = min(MAX_MB_S, max(STEP_MB_S, throughput // STEP_MB_S * STEP_MB_S))
    above = min(MAX_MB_S, max(STEP_MB_S, -(-throughput // STEP_MB_S) * STEP_MB_S))
    return " or ".join(f"{v:,}" for v in sorted({below, above}))


def throughput_problem(throughput: int | None, name: str = "throughput_capacity_mb_s") -> TieringProblem | None:
    """The file system's throughput capacity: required, 4,000 MB/s or a multiple up to 2,000,000."""
    rule = f"{TIERING} takes {STEP_MB_S:,} MB/s or a multiple of it, up to {MAX_MB_S:,}"
    if throughput is None:
        return TieringProblem(None, f"{TIERING} storage needs a throughput capacity for the whole file system: {rule}",
                              f"e.g. {name}: {STEP_MB_S}")
    if 0 < throughput <= MAX_MB_S and throughput % STEP_MB_S == 0:
        return None
    return TieringProblem("throughput_capacity", f"throughput capacity {throughput:,} MB/s is not valid: {rule}",
                          f"use {_steps(throughput)}")


def read_cache_problem(mode: str, size_gib: int | None, throughput: int | None,
                       name: str = "read_cache.size_gib") -> TieringProblem | None:
    """The SSD read cache: a size only for USER_PROVISIONED, and then one AWS accepts for the throughput."""
    if mode != USER_PROVISIONED:
        if size_gib is None:
            return None
        return TieringProblem("read_cache", f"a read cache sized {mode} takes no size ({size_gib:,} GiB given)",
                              f"remove {name}, or use sizing_mode {USER_PROVISIONED}")
    if size_gib is None:
        return TieringProblem("read_cache", f"a {USER_PROVISIONED} read cache needs its size", f"set {name}")
    if throughput is None or throughput_problem(throughput) is not None:
        return None  # the limits scale with a valid throughput; its own problem is reported
    steps = throughput // STEP_MB_S
    least, most = (per * steps for per in CACHE_GIB_PER_STEP)
    if least <= size_gib <= most:
        return None
    return TieringProblem("read_cache", f"an SSD read cache of {size_gib:,} GiB is not valid at {throughput:,} MB/s: "
                          f"AWS takes {CACHE_GIB_PER_STEP[0]:,} to {CACHE_GIB_PER_STEP[1]:,} GiB per {STEP_MB_S:,} "
                          f"MB/s, here {least:,} to {most:,} GiB", f"use a size from {least:,} to {most:,} GiB")


def tiering_problems(deployment_type: str, per_tib: int | None, throughput: int | None, cache_mode: str,
                     cache_gib: int | None, per_tib_name: str = "throughput_mb_s_per_tib",
                     throughput_name: str = "throughput_capacity_mb_s") -> list[TieringProblem]:
    """STO-002 on Intelligent-Tiering: the deployment type, no throughput per TiB, the throughput capacity and the
    read cache (plain values, shared with CrossGuard)."""
    problems: list[TieringProblem] = []
    if deployment_type != DEPLOYMENT:
        problems.append(TieringProblem("storage_type", f"{deployment_type} has no {TIERING} storage: it is "
                                       f"{DEPLOYMENT} only", f"use deployment_type {DEPLOYMENT}, or SSD storage"))
    if per_tib is not None:
        problems.append(TieringProblem("throughput", f"{TIERING} storage has no size, so no throughput per TiB: "
                                       f"{per_tib_name} is not accepted",
                                       f"remove it; set {throughput_name} for the whole file system"))
    for problem in (throughput_problem(throughput, throughput_name), read_cache_problem(cache_mode, cache_gib,
                                                                                        throughput)):
        if problem is not None:
            problems.append(problem)
    return problems


def sized_storage_problems(storage_type: str, throughput: int | None, has_cache: bool,
                           throughput_name: str = "throughput_capacity_mb_s") -> list[TieringProblem]:
    """STO-002 on SSD or HDD storage given what only Intelligent-Tiering takes: a whole-file-system throughput and
    an SSD read cache."""
    problems = []
    if throughput is not None:
        problems.append(TieringProblem("throughput_capacity", f"{storage_type} storage takes its throughput per TiB "
                                       f"of capacity; {throughput_name} is {TIERING}'s",
                                       f"remove it (use throughput_mb_s_per_tib), or use storage_type {TIERING}"))
    if has_cache:
        problems.append(TieringProblem("read_cache", f"{storage_type} storage has no SSD read cache to configure; "
                                       f"read_cache is {TIERING}'s", f"remove it, or use storage_type {TIERING}"))
    return problems


def read_cache(fsx: FsxLustre) -> tuple[str, int | None] | None:
    """(sizing mode, GiB) of the SSD read cache the stack gives an Intelligent-Tiering file system: the blueprint's,
    else sized by AWS in proportion to the throughput capacity (the first of the User Guide's modes, "Automatic");
    the size only with USER_PROVISIONED. None for SSD and HDD storage, which have none."""
    if not fsx.elastic:
        return None
    mode = fsx.read_cache.sizing_mode if fsx.read_cache is not None else PROPORTIONAL
    size = fsx.read_cache.size_gib if fsx.read_cache is not None and mode == USER_PROVISIONED else None
    return mode, size
