"""SLURM rules: partitions cover the compute pools, and GRES matches the hardware."""

from __future__ import annotations

import re
from collections.abc import Iterator

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("slurm", "SLURM", 70)


@rule("SLM-001", "error", DOMAIN, "Partitions", "SLURM slurm.conf(5): PartitionName, Default",
      inputs=Inputs(("pools[].{name,role,partition}", "slurm.partitions[].{name,pools,default}")))
def partitions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every compute pool is in a partition, and exactly one partition is the default."""
    cluster = ctx.cluster
    declared = cluster.slurm.partitions
    member = {pool for part in declared for pool in part.pools}
    member |= {p.name for p in cluster.pools if p.partition}
    for i, pool in enumerate(cluster.pools):
        if pool.role == "compute" and pool.name not in member:
            yield Draft(("pools", i), f"compute pool {pool.name} is in no SLURM partition",
                        "set its partition:, or list it in slurm.partitions[].pools")
    if declared:
        defaults = [p.name for p in declared if p.default]
        if len(defaults) != 1:
            yield Draft(("slurm", "partitions"), f"{len(defaults)} default partitions"
                        + (f" ({', '.join(defaults)})" if defaults else "") + "; SLURM needs exactly one",
                        "set default: true on one partition", len(defaults), 1)


@rule("SLM-002", "error", DOMAIN, "GRES matches the hardware", "SLURM gres.conf(5); the hardware catalog",
      inputs=Inputs(("pools[].{hardware,gres}",), ("gpus",)))
def gres_matches(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A pool's declared gres (gpu[:type]:count) agrees with the catalog's GPU count and model."""
    for i, pool in enumerate(ctx.cluster.pools):
        if pool.gres is None:
            continue
        entry = ctx.catalog.get(pool.hardware)
        gpus = getattr(entry, "gpus", None)
        match = re.fullmatch(r"gpu(?::([A-Za-z0-9_-]+))?:(\d+)", pool.gres)
        count = gpus.count if gpus else 0
        expected = f"gpu:{gpus.model.split('-')[0].lower()}:{count}" if gpus else "none"
        if match is None or int(match.group(2)) != count or (
                match.group(1) and gpus and match.group(1).lower() != gpus.model.split("-")[0].lower()):
            yield Draft(("pools", i, "gres"), f"pool {pool.name} declares gres {pool.gres!r}; {pool.hardware} has "
                        f"{count} × {gpus.model if gpus else 'no GPU'}", f"use {expected} or omit gres")
