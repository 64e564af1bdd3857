"""The report's cloud table for target aws: each pool's instance type, GPUs and EFA network, and what the report
draws for it (placement group, zone, capacity)."""

from __future__ import annotations

from typing import Any

from clusterforge.catalog import Catalog, Instance
from clusterforge.model import Cluster, Pool
from clusterforge.targets.aws.efa import availability_zone, efa_interfaces, placement_group, reservation
from clusterforge.targets.aws.section import CapacityBlock, aws_section


def cloud_pools(cluster: Cluster, catalog: Catalog) -> list[dict[str, Any]]:
    out = []
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Instance):
            efa = efa_interfaces(pool, entry)
            network = f"{efa} EFA interfaces, {entry.efa_bandwidth_gbps:,} Gbps" if efa else "ENA"
            out.append({"name": pool.name, "hardware": pool.hardware, "count": pool.count,
                        "gpus": pool.count * entry.gpu_count, "network": network,
                        **pool_facts(cluster, pool, entry)})
    return out


def pool_facts(cluster: Cluster, pool: Pool, entry: Instance) -> dict[str, Any]:
    """What the report's pool drawing shows besides the table: GPUs per instance, EFA interfaces, the placement
    group and its strategy, the zone and the capacity the pool launches into (the stack's own choices)."""
    gpus = entry.gpus or entry.accelerators
    group = placement_group(cluster, pool, entry)
    aws = aws_section(cluster)
    capacity = reservation(aws, pool) if aws is not None else None
    if capacity is None:
        bought = "on-demand"
    else:
        kind = "Capacity Block" if isinstance(capacity, CapacityBlock) else "ODCR"
        bought = f"{kind} {capacity.reservation_id}"
    return {
        "role": pool.role,
        "gpus_each": gpus.count if gpus else 0,
        "gpu_model": f"{gpus.model} {gpus.memory_gib:g} GiB" if gpus else "",
        "efa": efa_interfaces(pool, entry),
        "efa_gbps": entry.efa_bandwidth_gbps,
        "placement": f"placement group {group} (strategy cluster)" if group else "no placement group",
        "zone": availability_zone(cluster, pool) or "",
        "capacity": bought,
    }
