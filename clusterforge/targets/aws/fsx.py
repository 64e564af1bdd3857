"""FSx for Lustre sizes and throughput tiers AWS accepts, as plain values: the blueprint rules (STO-001,
STO-002) and their CrossGuard policies share them. Intelligent-Tiering storage has neither a size nor a tier per
TiB: its limits are fsx_tiering.py's."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.model import FsxLustre
from clusterforge.targets.aws.fsx_tiering import TIERING

THROUGHPUT_TIERS: dict[tuple[str, str], tuple[int, ...]] = {
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000),
    ("PERSISTENT_1", "SSD"): (50, 100, 200),
    ("PERSISTENT_1", "HDD"): (12, 40),
}


def capacity_step(deployment_type: str, storage_type: str = "SSD", throughput: int | None = None) -> int:
    """The increment AWS accepts past 1,200/2,400 GiB (for HDD the only one): plain values, shared with CrossGuard."""
    if storage_type == "HDD":
        return 6000 if throughput == 12 else 1800
    return 3600 if deployment_type == "SCRATCH_1" else 2400


def capacity_rule(
    gib: int, deployment_type: str, storage_type: str = "SSD", throughput: int | None = None
) -> str | None:
    """None when the capacity is valid for the deployment and storage type, else the rule in words."""
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
