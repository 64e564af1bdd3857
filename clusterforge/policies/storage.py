"""Storage rules: FSx for Lustre capacity and throughput tiers, and the checkpoint window."""

from __future__ import annotations

from collections.abc import Iterator

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


def valid_capacities(fsx: FsxLustre) -> str | None:
    """None when the capacity is valid for the deployment and storage type, else the rule in words."""
    gib, kind = fsx.capacity_gib, fsx.deployment_type
    if fsx.storage_type == "HDD":
        step = 6000 if fsx.throughput_mb_s_per_tib == 12 else 1800
        tier = fsx.throughput_mb_s_per_tib
        return None if gib % step == 0 else f"a multiple of {step:,} GiB (HDD at {tier} MB/s/TiB)"
    step = 3600 if kind == "SCRATCH_1" else 2400
    if gib in (1200, 2400) or gib % step == 0:
        return None
    return f"1,200 GiB, 2,400 GiB or a multiple of {step:,} GiB ({kind} SSD)"


@rule("STO-001", "error", "storage", "FSx for Lustre capacity", FSX_DOCS, targets="aws")
def fsx_capacity(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """FSx capacity is a size AWS accepts for the deployment and storage type (1,200, 2,400 or multiples)."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    rule_text = valid_capacities(fsx)
    if rule_text is not None:
        step = 6000 if fsx.storage_type == "HDD" and fsx.throughput_mb_s_per_tib == 12 else (
            1800 if fsx.storage_type == "HDD" else 3600 if fsx.deployment_type == "SCRATCH_1" else 2400)
        up = -(-fsx.capacity_gib // step) * step
        yield Draft(("storage", "lustre", "capacity_gib"), f"FSx capacity {fsx.capacity_gib:,} GiB is not valid: "
                    f"it must be {rule_text}", f"use {up:,} GiB", fsx.capacity_gib, up, "GiB")


@rule("STO-002", "error", "storage", "FSx throughput tier", "AWS FSx for Lustre performance (throughput tiers)",
      targets="aws")
def fsx_throughput(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """PERSISTENT_* takes a valid throughput tier (P2 125/250/500/1000, P1 SSD 50/100/200, HDD 12/40); SCRATCH none."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    path = ("storage", "lustre", "throughput_mb_s_per_tib")
    tiers = THROUGHPUT_TIERS.get((fsx.deployment_type, fsx.storage_type))
    if fsx.deployment_type.startswith("SCRATCH"):
        if fsx.throughput_mb_s_per_tib is not None:
            yield Draft(path, f"{fsx.deployment_type} has a fixed throughput; throughput_mb_s_per_tib is not "
                        "accepted", "remove it, or use PERSISTENT_2")
        if fsx.storage_type == "HDD":
            yield Draft(("storage", "lustre", "storage_type"), f"{fsx.deployment_type} is SSD only", "use SSD")
        return
    if tiers is None:
        yield Draft(("storage", "lustre", "storage_type"), f"{fsx.deployment_type} does not offer "
                    f"{fsx.storage_type} storage", "use SSD")
    elif fsx.throughput_mb_s_per_tib not in tiers:
        given = fsx.throughput_mb_s_per_tib
        yield Draft(path if given is not None else ("storage", "lustre"),
                    f"{fsx.deployment_type} {fsx.storage_type} throughput must be one of "
                    f"{', '.join(map(str, tiers))} MB/s/TiB" + (f", not {given}" if given is not None else
                                                                  " and is required"),
                    f"e.g. throughput_mb_s_per_tib: {tiers[1] if len(tiers) > 1 else tiers[0]}")


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
