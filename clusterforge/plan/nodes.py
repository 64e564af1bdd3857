"""Node names and where each node stands: `<pool>-0001`, zero-padded, numbered in rack order."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Instance, Server
from clusterforge.model import Cluster
from clusterforge.plan.model import NodeRun, PoolNodes, RackPlan
from clusterforge.plan.topology import fabric_nics
from clusterforge.targets.aws.efa import availability_zone, efa_interfaces, placement_group

MIN_WIDTH = 4


def name_width(count: int, minimum: int = MIN_WIDTH) -> int:
    """Digits of the node number: at least `minimum`, more when the count needs them (gpu-00001 at 10,000+)."""
    return max(minimum, len(str(count)))


def node_runs(cluster: Cluster, racks: tuple[RackPlan, ...],
              elevations: tuple[tuple[tuple[int | None, ...], ...], ...]) -> dict[str, tuple[NodeRun, ...]]:
    """Number each pool's nodes in rack order (blueprint order, explicit devices first); the rest trail unplaced."""
    runs: dict[str, list[NodeRun]] = {p.name: [] for p in cluster.pools}
    next_number = dict.fromkeys(runs, 1)
    for rack, positions in zip(racks, elevations, strict=True):
        for placed, starts in zip(rack.devices, positions, strict=True):
            first = next_number[placed.pool]
            runs[placed.pool].append(NodeRun(first, placed.count, rack.name, rack.row, starts))
            next_number[placed.pool] = first + placed.count
    for pool in cluster.pools:
        first = next_number[pool.name]
        if first <= pool.count:
            runs[pool.name].append(NodeRun(first, pool.count - first + 1))
    return {name: tuple(r) for name, r in runs.items()}


def pool_nodes(cluster: Cluster, catalog: Catalog, racks: tuple[RackPlan, ...],
               elevations: tuple[tuple[tuple[int | None, ...], ...], ...]) -> tuple[PoolNodes, ...]:
    """Every pool's nodes with the per-host facts the renderers need (GPUs, rails, EFA)."""
    runs = node_runs(cluster, racks, elevations)
    out = []
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        gpus = entry.gpus if isinstance(entry, Server | Instance) else None
        instance = entry if isinstance(entry, Instance) else None
        out.append(PoolNodes(
            pool=pool.name, role=pool.role, hardware=pool.hardware, count=pool.count,
            width=name_width(pool.count), gpu_count=gpus.count if gpus else 0, gpu_model=gpus.model if gpus else None,
            fabric_nics=fabric_nics(pool, entry), runs=runs[pool.name],
            efa_interfaces=efa_interfaces(pool, instance) if instance else None,
            placement_group=placement_group(cluster, pool, instance) if instance else None,
            availability_zone=availability_zone(cluster, pool) if instance else None,
        ))
    return tuple(out)
