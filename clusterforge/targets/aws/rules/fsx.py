"""FSx for Lustre rules of target aws: capacity sizes, throughput tiers and metadata IOPS (STO-001, STO-002,
STO-004), each judging Intelligent-Tiering storage by its own limits (fsx_tiering.py): no capacity, a throughput
capacity in 4,000 MB/s steps, a read cache and 6,000 or 12,000 metadata IOPS."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs, Preview
from clusterforge.policies.registry import domain, rule
from clusterforge.targets.aws.crossguard.tokens import LUSTRE
from clusterforge.targets.aws.fsx import capacity_step, capacity_unjudged, tier_problems, valid_capacities
from clusterforge.targets.aws.fsx_metadata import SOURCE, metadata_problem
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.fsx_tiering import SOURCE as TIERING_SOURCE
from clusterforge.targets.aws.fsx_tiering import (
    TieringProblem,
    capacity_refused,
    sized_storage_problems,
    tiering_problems,
)

DOMAIN = domain("storage", "Storage", 50)
FSX_DOCS = ("AWS FSx CreateFileSystem StorageCapacity; ParallelCluster FsxStorageCapacityValidator; "
            "Intelligent-Tiering: FSx for Lustre User Guide (elastic storage)")
FIELDS: dict[str | None, tuple[str, ...]] = {
    "capacity": ("storage", "lustre", "capacity_gib"),
    "throughput": ("storage", "lustre", "throughput_mb_s_per_tib"),
    "throughput_capacity": ("storage", "lustre", "throughput_capacity_mb_s"),
    "read_cache": ("storage", "lustre", "read_cache"),
    "storage_type": ("storage", "lustre", "storage_type"),
    None: ("storage", "lustre"),
}


def _fsx(ctx: Context) -> FsxLustre | None:
    lustre = ctx.cluster.storage.lustre
    return lustre if isinstance(lustre, FsxLustre) else None


@rule("STO-001", "error", DOMAIN, "FSx for Lustre capacity", FSX_DOCS, target="aws",
      inputs=Inputs(("storage.lustre.{capacity_gib,deployment_type,storage_type,throughput_mb_s_per_tib}",)),
      preview=Preview((LUSTRE,), "clusterforge.targets.aws.crossguard.lustre:capacity_problems",
                      "`storageCapacity` for the `deploymentType`/`storageType` (same helper as the blueprint rule)"))
def fsx_capacity(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """FSx capacity is a size AWS accepts for the deployment and storage type (1,200, 2,400 or multiples); where the
    pair does not exist (PERSISTENT_2 or SCRATCH on HDD) or an HDD tier is missing, no size is, and it says so.
    Intelligent-Tiering storage is elastic: it takes no capacity at all."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    if fsx.elastic:
        refused = capacity_refused(fsx.capacity_gib)
        if refused is not None:
            yield Draft(FIELDS[refused.field], refused.message, refused.hint)
        return
    if fsx.capacity_gib is None:
        return  # the model requires one for SSD and HDD
    unjudged = capacity_unjudged(fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib)
    if unjudged is not None:
        why, fix = unjudged
        yield Draft(("storage", "lustre", "capacity_gib"), f"FSx capacity {fsx.capacity_gib:,} GiB cannot be "
                    f"judged: {why}", f"{fix} (STO-002 reports the setting)")
        return
    rule_text = valid_capacities(fsx)
    if rule_text is not None:
        step = capacity_step(fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib)
        up = -(-fsx.capacity_gib // step) * step
        yield Draft(("storage", "lustre", "capacity_gib"), f"FSx capacity {fsx.capacity_gib:,} GiB is not valid: "
                    f"it must be {rule_text}", f"use {up:,} GiB", fsx.capacity_gib, up, "GiB")


@rule("STO-002", "error", DOMAIN, "FSx throughput tier",
      f"AWS FSx for Lustre performance (throughput tiers); Intelligent-Tiering: {TIERING_SOURCE}", target="aws",
      inputs=Inputs(("storage.lustre.{deployment_type,storage_type,throughput_mb_s_per_tib,throughput_capacity_mb_s,"
                     "read_cache}",)),
      preview=Preview((LUSTRE,), "clusterforge.targets.aws.crossguard.lustre:throughput_problems",
                      "`perUnitStorageThroughput` is a tier of the deployment and storage type; none for SCRATCH"))
def fsx_throughput(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """PERSISTENT_* takes a valid throughput tier (P2 125/250/500/1000, P1 SSD 50/100/200, HDD 12/40); SCRATCH none.
    Intelligent-Tiering (PERSISTENT_2 only) takes a throughput capacity for the whole file system, 4,000 MB/s or a
    multiple up to 2,000,000, no tier per TiB, and a read cache AWS can size (32 to 131,072 GiB per 4,000 MB/s)."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    problems: list[TieringProblem] = []
    if fsx.elastic:
        cache = fsx.read_cache
        problems += tiering_problems(fsx.deployment_type, fsx.throughput_mb_s_per_tib, fsx.throughput_capacity_mb_s,
                                     cache.sizing_mode if cache else "PROPORTIONAL_TO_THROUGHPUT_CAPACITY",
                                     cache.size_gib if cache else None)
    else:
        problems += [TieringProblem(p.field, p.message, p.hint) for p in
                     tier_problems(fsx.deployment_type, fsx.storage_type, fsx.throughput_mb_s_per_tib)]
        problems += sized_storage_problems(fsx.storage_type, fsx.throughput_capacity_mb_s, fsx.read_cache is not None)
    for problem in problems:
        yield Draft(FIELDS[problem.field], problem.message, problem.hint)


@rule("STO-004", "error", DOMAIN, "FSx metadata IOPS", SOURCE, target="aws",
      inputs=Inputs(("storage.lustre.{metadata_iops,deployment_type,storage_type}",)),
      preview=Preview((LUSTRE,), "clusterforge.targets.aws.crossguard.fsx_metadata:metadata_problems",
                      "`metadataConfiguration.iops` is a value AWS accepts for the deployment and storage type "
                      "and mode (same helper as the blueprint rule)"))
def fsx_metadata_iops(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Provisioned metadata IOPS are a value CreateFileSystem accepts: on SSD 1,500, 3,000, 6,000, 12,000 or a
    multiple of 12,000 up to 192,000; on Intelligent-Tiering 6,000 or 12,000, and required (no AUTOMATIC mode);
    only PERSISTENT_2 takes them (the stack would otherwise drop them)."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    problem = metadata_problem(fsx.metadata_iops, fsx.deployment_type, fsx.storage_type)
    if problem is not None:
        yield Draft(("storage", "lustre", "metadata_iops"), problem.message, problem.hint)
