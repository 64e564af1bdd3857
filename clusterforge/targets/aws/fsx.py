"""FSx for Lustre sizes and throughput tiers AWS accepts, as plain values: the blueprint rules (STO-001,
STO-002) and their CrossGuard policies share them. Intelligent-Tiering storage has neither a size nor a tier per
TiB: its limits are fsx_tiering.py's."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.fsx_tiering import TIERING

THROUGHPUT_TIERS: dict[tuple[str, str], tuple[int, ...]] = {
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000),
    ("PERSISTENT_1", "SSD"): (50, 100, 200),
    ("PERSISTENT_1", "HDD"): (12, 40),
}


# The storage types each deployment type offers (AWS FSx CreateFileSystem, StorageCapacity and
# PerUnitStorageThroughput: capacities and tiers are given for SCRATCH_1, SCRATCH_2, PERSISTENT_2 on SSD and for
# PERSISTENT_1 on SSD or HDD, the HDD sizes by tier: 6,000 GiB steps at 12 MB/s/TiB, 1,800 GiB at 40).
STORAGE_TYPES: dict[str, tuple[str, ...]] = {
    "SCRATCH_1": ("SSD",), "SCRATCH_2": ("SSD",), "PERSISTENT_1": ("SSD", "HDD"), "PERSISTENT_2": ("SSD",),
}
HDD_STEPS: dict[int, int] = {12: 6000, 40: 1800}  # PERSISTENT_1 HDD: MB/s/TiB -> GiB step


def capacity_unjudged(deployment_type: str, storage_type: str = "SSD", throughput: int | None = None
                      ) -> tuple[str, str] | None:
    """Why no capacity is valid whatever its size, and the fix, or None: a deployment type that does not offer the
    storage type, or an HDD file system without one of the tiers its sizes follow (STO-002 reports the setting)."""
    if not any(storage_type in types for types in STORAGE_TYPES.values()):
        return None  # a storage type of its own limits (Intelligent-Tiering): not one these sizes are for
    offered = STORAGE_TYPES.get(deployment_type, (storage_type,))
    if storage_type not in offered:
        others = [kind for kind, types in STORAGE_TYPES.items() if storage_type in types]
        return (f"{deployment_type} has no {storage_type} storage",
                f"use {' or '.join(offered)}" + (f", or {' or '.join(others)} for {storage_type}" if others else ""))
    if storage_type == "HDD" and throughput not in HDD_STEPS:
        tier = "none is given" if throughput is None else f"{throughput} MB/s/TiB is neither"
        steps = ", ".join(f"{step:,} GiB at {t}" for t, step in HDD_STEPS.items())
        return (f"{deployment_type} HDD sizes follow the throughput tier (steps of {steps}) and {tier}",
                f"set throughput_mb_s_per_tib to {' or '.join(map(str, HDD_STEPS))}")
    return None


def capacity_step(deployment_type: str, storage_type: str = "SSD", throughput: int | None = None) -> int:
    """The increment AWS accepts past 1,200/2,400 GiB (for HDD the only one): plain values, shared with CrossGuard."""
    if storage_type == "HDD":
        return HDD_STEPS.get(throughput or 0, 1800)
    return 3600 if deployment_type == "SCRATCH_1" else 2400


def capacity_rule(
    gib: int, deployment_type: str, storage_type: str = "SSD", throughput: int | None = None
) -> str | None:
    """None when the capacity is valid for the deployment and storage type, else the rule in words. Only for a file
    system AWS offers: callers ask capacity_unjudged first, since no rule exists for the others."""
    step = capacity_step(deployment_type, storage_type, throughput)
    if storage_type == "HDD":
        return None if gib % step == 0 else f"a multiple of {step:,} GiB (HDD at {throughput} MB/s/TiB)"
    if gib in (1200, 2400) or gib % step == 0:
        return None
    return f"1,200 GiB, 2,400 GiB or a multiple of {step:,} GiB ({deployment_type} SSD)"


def valid_capacities(fsx: FsxLustre) -> str | None:
    """None when the blueprint's capacity is valid for its deployment and storage type, else the rule in words
    (None too without a capacity: Intelligent-Tiering's is STO-001's own case)."""
    if fsx.capacity_gib is None:
        return None
    return capacity_rule(fsx.capacity_gib, fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib)


@dataclass(frozen=True)
class TierProblem:
    """A throughput-tier problem; `field` is "throughput", "storage_type" or None (the whole file system)."""

    field: str | None
    message: str
    hint: str


def tier_problems(deployment_type: str, storage_type: str = "SSD", throughput: int | None = None,
                  name: str = "throughput_mb_s_per_tib") -> list[TierProblem]:
    """Throughput-tier problems from plain values (shared with CrossGuard); `name` is the throughput field's name.
    Intelligent-Tiering storage has no tier per TiB: fsx_tiering.tiering_problems judges it."""
    if storage_type == TIERING:
        return []
    if deployment_type.startswith("SCRATCH"):
        problems: list[TierProblem] = []
        if throughput is not None:
            problems.append(TierProblem("throughput", f"{deployment_type} has a fixed throughput; {name} is not "
                                        "accepted", "remove it, or use PERSISTENT_2"))
        if storage_type == "HDD":
            problems.append(TierProblem("storage_type", f"{deployment_type} is SSD only", "use SSD"))
        return problems
    tiers = THROUGHPUT_TIERS.get((deployment_type, storage_type))
    if tiers is None:
        return [TierProblem("storage_type", f"{deployment_type} does not offer {storage_type} storage", "use SSD")]
    if throughput in tiers:
        return []
    return [TierProblem("throughput" if throughput is not None else None,
                        f"{deployment_type} {storage_type} throughput must be one of "
                        f"{', '.join(map(str, tiers))} MB/s/TiB" + (f", not {throughput}" if throughput is not None
                                                                      else " and is required"),
                        f"e.g. {name}: {tiers[1] if len(tiers) > 1 else tiers[0]}")]
