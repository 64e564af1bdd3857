"""FSx for Lustre rules of target aws: capacity sizes, throughput tiers and metadata IOPS (STO-001, STO-002,
STO-004)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.model import FsxLustre
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs, Preview
from clusterforge.policies.registry import domain, rule
from clusterforge.targets.aws.crossguard.tokens import LUSTRE
from clusterforge.targets.aws.fsx import capacity_step, tier_problems, valid_capacities
from clusterforge.targets.aws.fsx_metadata import SOURCE, metadata_problem

DOMAIN = domain("storage", "Storage", 50)
FSX_DOCS = "AWS FSx CreateFileSystem StorageCapacity; ParallelCluster FsxStorageCapacityValidator"


def _fsx(ctx: Context) -> FsxLustre | None:
    lustre = ctx.cluster.storage.lustre
    return lustre if isinstance(lustre, FsxLustre) else None


@rule("STO-001", "error", DOMAIN, "FSx for Lustre capacity", FSX_DOCS, target="aws",
      inputs=Inputs(("storage.lustre.{capacity_gib,deployment_type,storage_type,throughput_mb_s_per_tib}",)),
      preview=Preview((LUSTRE,), "clusterforge.targets.aws.crossguard.lustre:capacity_problems",
                      "`storageCapacity` for the `deploymentType`/`storageType` (same helper as the blueprint rule)"))
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


@rule("STO-002", "error", DOMAIN, "FSx throughput tier", "AWS FSx for Lustre performance (throughput tiers)",
      target="aws", inputs=Inputs(("storage.lustre.{deployment_type,storage_type,throughput_mb_s_per_tib}",)),
      preview=Preview((LUSTRE,), "clusterforge.targets.aws.crossguard.lustre:throughput_problems",
                      "`perUnitStorageThroughput` is a tier of the deployment and storage type; none for SCRATCH"))
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


@rule("STO-004", "error", DOMAIN, "FSx metadata IOPS", SOURCE, target="aws",
      inputs=Inputs(("storage.lustre.{metadata_iops,deployment_type,storage_type}",)),
      preview=Preview((LUSTRE,), "clusterforge.targets.aws.crossguard.fsx_metadata:metadata_problems",
                      "`metadataConfiguration.iops` is a value AWS accepts for the deployment and storage type "
                      "and mode (same helper as the blueprint rule)"))
def fsx_metadata_iops(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Provisioned metadata IOPS are a value CreateFileSystem accepts: on SSD 1,500, 3,000, 6,000, 12,000 or a
    multiple of 12,000 up to 192,000; only PERSISTENT_2 takes them (the stack would otherwise drop them)."""
    fsx = _fsx(ctx)
    if fsx is None:
        return
    problem = metadata_problem(fsx.metadata_iops, fsx.deployment_type, fsx.storage_type)
    if problem is not None:
        yield Draft(("storage", "lustre", "metadata_iops"), problem.message, problem.hint)
