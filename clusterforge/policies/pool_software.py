"""Which software each pool runs: its accelerators' vendor picks the stack (clusterforge/accelerators), its
`software:` override the pins.

A cluster may run NVIDIA and AMD partitions side by side (one slurmctld, a partition per vendor), so the software
rules do not check one cluster-wide stack: they check each *pool set*, the pools that run one stack on the same pins,
once. Pools without an override share the cluster's pins and form one set per stack; a pool with an override is a
set of its own. The number of sets is at most the number of pools, whatever the node count.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from clusterforge.accelerator_kernel import accelerator, default, instance_default
from clusterforge.catalog import Gpus, Instance, Server
from clusterforge.files.yamlsource import PathKey
from clusterforge.model import Cluster, Pool, Software
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft

NAMED = 4  # pools named in a message before "and N more"


def accelerators(entry: object) -> Gpus | None:
    """The accelerators of one node of a catalog entry: a server's (a tray's for a rack-scale system) or an
    instance type's GPUs or accelerators; None for CPU-only hardware. An instance type's `accelerators` without a
    vendor are the cloud's own chips (the registry's instance default: Trainium, Inferentia), not the default vendor
    that `Gpus.vendor` falls back to."""
    if isinstance(entry, Server):
        return entry.node_gpus
    if isinstance(entry, Instance):
        if entry.gpus is not None or entry.accelerators is None:
            return entry.gpus
        chips = entry.accelerators
        own = instance_default()
        if "vendor" in chips.model_fields_set or own is None:
            return chips
        return chips.model_copy(update={"vendor": own.name})
    return None


@dataclass(frozen=True)
class PoolSet:
    """Pools that run one stack on the same pins. `index` is the pool's index when the set is one pool with its own
    `software:` override (the pins it sets are located there), None for pools on the cluster's pins."""

    stack: str
    software: Software
    pools: tuple[tuple[int, Pool, Gpus], ...]
    index: int | None = None

    def path(self, field: str) -> PathKey:
        """Where `field` is pinned for these pools: the pool's override or the cluster's `software` block."""
        pool = self.pools[0][1] if self.pools else None
        if self.index is not None and pool is not None and pool.software is not None \
                and field in pool.software.pins():
            return ("pools", self.index, "software", field)
        return ("software", field)

    def names(self) -> str:
        names = [pool.name for _, pool, _ in self.pools]
        shown = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
        return ("pool " if len(names) == 1 else "pools ") + shown


def pool_sets(ctx: Context) -> list[PoolSet]:
    """The cluster's pool sets, in pool order. Pools without accelerators run no accelerator stack; a cluster without
    any still has its pins checked, as the declared stack's (the default vendor's, CUDA, unless `software.stack` says
    otherwise)."""
    cluster = ctx.cluster
    declared = cluster.software.stack
    shared: dict[str, list[tuple[int, Pool, Gpus]]] = {}
    sets: list[PoolSet] = []
    for i, pool in enumerate(cluster.pools):
        gpus = accelerators(ctx.catalog.get(pool.hardware))
        if gpus is None:
            continue
        stack = declared or accelerator(gpus.vendor).stack
        if pool.software is not None:
            sets.append(PoolSet(stack, cluster.software.with_override(pool.software), ((i, pool, gpus),), i))
        else:
            shared.setdefault(stack, []).append((i, pool, gpus))
    common = [PoolSet(stack, cluster.software, tuple(members)) for stack, members in shared.items()]
    if not common and not sets:
        common = [PoolSet(declared or default().stack, cluster.software, ())]
    return common + sets


def where(sets: list[PoolSet], pool_set: PoolSet) -> str:
    """The prefix naming a set's pools in a message, when the cluster has more than one set (else "")."""
    if (len(sets) == 1 and pool_set.index is None) or not pool_set.pools:
        return ""
    return pool_set.names() + ": "


def located(drafts: list[Draft], sets: list[PoolSet], pool_set: PoolSet) -> list[Draft]:
    """Drafts written against the cluster's `software` block, moved to where the set's pins are and prefixed with
    its pools when that is needed to tell sets apart."""
    prefix = where(sets, pool_set)
    out = []
    for draft in drafts:
        path = draft.path
        if len(path) == 2 and path[0] == "software" and isinstance(path[1], str):
            path = pool_set.path(path[1])
        out.append(replace(draft, path=path, message=prefix + draft.message))
    return out


def effective(cluster: Cluster, pool: Pool) -> Software:
    """A pool's pins: the cluster's with the pool's override applied."""
    return cluster.software.with_override(pool.software)
