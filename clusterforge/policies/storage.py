"""Storage rules: FSx for Lustre capacity and throughput tiers, and the checkpoint window."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from clusterforge.model import FsxLustre, OnPremLustre
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.registry import rule

FSX_DOCS = "AWS FSx CreateFileSystem StorageCapacity; ParallelCluster FsxStorageCapacityValidator"
THROUGHPUT_TIERS: dict[tuple[str, str], tuple[int, ...]] = {
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000),
    ("PERSISTENT_1", "SSD"): (50, 100, 200),
    ("PERSISTENT_1", "HDD"): (12, 40),
}
SCRATCH_BASELINE_MB_S_PER_TIB = 200  # SCRATCH_1/2 baseline throughput (AWS FSx performance docs)


def _fsx(ctx: Context) -> FsxLustre | None:
    lustre = ctx.cluster.storage.lustre
    return lustre if isinstance(lustre, FsxLustre) else None


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
    """None when the blueprint's capacity is valid for its deployment and storage type, else the rule in words."""
    return capacity_rule(fsx.capacity_gib, fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib)


@rule("STO-001", "error", "storage", "FSx for Lustre capacity", FSX_DOCS, targets="aws")
def fsx_capacity(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """FSx capacity is a size AWS accepts for the deployment and storage type (1,200, 2,400 or multiples)."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    rule_text = valid_capacities(fsx)
    if rule_text is not None:
        step = capacity_step(fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib)
        up = -(-fsx.capacity_gib // step) * step
        yield Draft(("storage", "lustre", "capacity_gib"), f"FSx capacity {fsx.capacity_gib:,} GiB is not valid: "
                    f"it must be {rule_text}", f"use {up:,} GiB", fsx.capacity_gib, up, "GiB")


@dataclass(frozen=True)
class TierProblem:
    """A throughput-tier problem; `field` is "throughput", "storage_type" or None (the whole file system)."""

    field: str | None
    message: str
    hint: str


def tier_problems(deployment_type: str, storage_type: str = "SSD", throughput: int | None = None,
                  name: str = "throughput_mb_s_per_tib") -> list[TierProblem]:
    """Throughput-tier problems from plain values (shared with CrossGuard); `name` is the throughput field's name."""
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


@rule("STO-002", "error", "storage", "FSx throughput tier", "AWS FSx for Lustre performance (throughput tiers)",
      targets="aws")
def fsx_throughput(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """PERSISTENT_* takes a valid throughput tier (P2 125/250/500/1000, P1 SSD 50/100/200, HDD 12/40); SCRATCH none."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    paths: dict[str | None, tuple[str, ...]] = {
        "throughput": ("storage", "lustre", "throughput_mb_s_per_tib"),
        "storage_type": ("storage", "lustre", "storage_type"),
        None: ("storage", "lustre"),
    }
    for problem in tier_problems(fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib):
        yield Draft(paths[problem.field], problem.message, problem.hint)


def write_gb_s(ctx: Context) -> float | None:
    """Aggregate file-system write bandwidth: FSx TiB × MB/s/TiB ÷ 1000, or the on-prem figure given."""
    lustre = ctx.cluster.storage.lustre
    if isinstance(lustre, FsxLustre):
        tier = lustre.throughput_mb_s_per_tib or SCRATCH_BASELINE_MB_S_PER_TIB
        return lustre.capacity_tib * tier / 1000
    if isinstance(lustre, OnPremLustre):
        return lustre.write_gb_s
    return None


@rule("STO-003", "warning", "storage", "Checkpoint window",
      "ZeRO (Rajbhandari et al. 2020): bf16 weights 2 B + Adam fp32 states 12 B per parameter")
def checkpoint_window(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A full checkpoint (params × 14 B) written at the file system's bandwidth takes ≤ max_checkpoint_s."""
    workload = ctx.cluster.workload
    bandwidth = write_gb_s(ctx)
    if workload is None or bandwidth is None:
        return
    size_gb = workload.model_params_b * workload.bytes_per_param
    seconds = size_gb / bandwidth
    if seconds > workload.max_checkpoint_s:
        need = size_gb / workload.max_checkpoint_s
        yield Draft(("workload", "max_checkpoint_s"),
                    f"a {workload.model_params_b:g}B-parameter checkpoint ({size_gb:,.0f} GB) takes {seconds:.0f} s "
                    f"at {bandwidth:.1f} GB/s; the target is {workload.max_checkpoint_s:g} s",
                    f"raise file-system throughput to {need:.1f} GB/s (more capacity or a higher tier)",
                    seconds, workload.max_checkpoint_s, "s")
