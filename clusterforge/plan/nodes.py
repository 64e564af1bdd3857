"""Node names and where each node stands: `<pool>-0001`, zero-padded, numbered in rack order (a rack-scale
system's trays are nodes of their own, numbered through the rack)."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Instance, Server
from clusterforge.model import Cluster
from clusterforge.plan.model import NodeRun, PoolNodes, RackPlan
from clusterforge.plan.topology import fabric_nic_gbps, fabric_nics, hosts_per_device
from clusterforge.target_kernel import pool_target, render_part

MIN_WIDTH = 4


def name_width(count: int, minimum: int = MIN_WIDTH) -> int:
    """Digits of the node number: at least `minimum`, more when the count needs them (gpu-00001 at 10,000+)."""
    return max(minimum, len(str(count)))


def node_runs(cluster: Cluster, racks: tuple[RackPlan, ...],
              elevations: tuple[tuple[tuple[int | None, ...], ...], ...],
              hosts: dict[str, int]) -> dict[str, tuple[NodeRun, ...]]:
    """Number each pool's nodes in rack order (blueprint order, explicit devices first); the rest trail unplaced.
    A device of `hosts[pool]` hosts (an NVL72's trays) gives that many consecutive nodes, all at its position."""
    runs: dict[str, list[NodeRun]] = {p.name: [] for p in cluster.pools}
    next_number = dict.fromkeys(runs, 1)
    for rack, positions in zip(racks, elevations, strict=True):
        for placed, starts in zip(rack.devices, positions, strict=True):
            first, per = next_number[placed.pool], hosts[placed.pool]
            at = tuple(start for start in starts for _ in range(per))
            runs[placed.pool].append(NodeRun(first, placed.count * per, rack.name, rack.row, at))
            next_number[placed.pool] = first + placed.count * per
    for pool in cluster.pools:
        first, total = next_number[pool.name], pool.ceiling * hosts[pool.name]
        if first <= total:
            runs[pool.name].append(NodeRun(first, total - first + 1))
    return {name: tuple(r) for name, r in runs.items()}


def pool_nodes(cluster: Cluster, catalog: Catalog, racks: tuple[RackPlan, ...],
               elevations: tuple[tuple[tuple[int | None, ...], ...], ...]) -> tuple[PoolNodes, ...]:
    """Every pool's nodes with the per-host facts the renderers need (GPUs, rails, and what the target gives them:
    EFA, placement, zone)."""
    hosts = {pool.name: hosts_per_device(catalog.get(pool.hardware)) for pool in cluster.pools}
    runs = node_runs(cluster, racks, elevations, hosts)
    out = []
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        gpus = entry.node_gpus if isinstance(entry, Server) else entry.gpus if isinstance(entry, Instance) else None
        facts = render_part(pool_target(cluster, pool)).node_facts(cluster, pool, entry)
        count = pool.ceiling * hosts[pool.name]
        out.append(PoolNodes(
            pool=pool.name, role=pool.role, hardware=pool.hardware, count=count, domain_size=hosts[pool.name],
            gpu_vendor=gpus.vendor if gpus else None,
            width=name_width(count), gpu_count=gpus.count if gpus else 0, gpu_model=gpus.model if gpus else None,
            fabric_nics=fabric_nics(pool, entry), fabric_nic_gbps=fabric_nic_gbps(pool, entry), runs=runs[pool.name],
            target_vars=facts.vars, network=facts.network,
        ))
    return tuple(out)
