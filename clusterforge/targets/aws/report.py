"""The report's cloud table for target aws: each pool's instance type, GPUs and EFA network, and what the report
draws for it (placement group, zone, capacity); and the card of the FSx for Lustre file system the pools mount."""

from __future__ import annotations

from html import escape
from typing import Any

from clusterforge.catalog import Catalog
from clusterforge.model import Cluster, Pool
from clusterforge.targets.aws.efa import availability_zone, efa_interfaces, placement_group, reservation
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.section import CapacityBlock, aws_section


def cloud_pools(cluster: Cluster, catalog: Catalog) -> list[dict[str, Any]]:
    out = []
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Ec2Instance):
            efa = efa_interfaces(pool, entry)
            network = (f"{efa} EFA interface{'' if efa == 1 else 's'}, {entry.efa_bandwidth_gbps:,} Gbps" if efa
                       else "ENA")
            out.append({"name": pool.name, "hardware": pool.hardware, "count": pool.count,
                        "gpus": pool.count * entry.gpu_count, "network": network,
                        **pool_facts(cluster, pool, entry)})
    return out


def pool_facts(cluster: Cluster, pool: Pool, entry: Ec2Instance) -> dict[str, Any]:
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
        "interfaces": efa_interfaces(pool, entry),
        "efa_gbps": entry.efa_bandwidth_gbps,
        "placement": f"placement group {group} (strategy cluster)" if group else "no placement group",
        "zone": availability_zone(cluster, pool) or "",
        "capacity": bought,
    }


def storage_card(cluster: Cluster) -> dict[str, Any] | None:
    """The FSx for Lustre file system's figures and drawing (None when the blueprint has none or runs its own
    Lustre)."""
    lustre = cluster.storage.lustre
    if not isinstance(lustre, FsxLustre):
        return None
    tib = lustre.capacity_tib
    per_tib = lustre.throughput_mb_s_per_tib
    if tib is None:  # Intelligent-Tiering: elastic storage, provisioned by throughput for the whole file system
        mb_s = lustre.throughput_capacity_mb_s
        size, big = f"elastic (grows and shrinks with the data, {lustre.storage_type})", "elastic"
        throughput = f"{mb_s / 1000:,.1f} GB/s ({mb_s:,} MB/s provisioned)" if mb_s else "not given"
    else:
        size, big = f"{lustre.capacity_gib:,} GiB ({tib:,.1f} TiB, {lustre.storage_type})", f"{tib:,.1f} TiB"
        throughput = (f"{tib * per_tib / 1000:,.1f} GB/s ({per_tib} MB/s per TiB)" if per_tib
                      else "the deployment type's baseline")
    facts = [("capacity", size),
             ("throughput", throughput), ("deployment type", lustre.deployment_type),
             ("mount", lustre.mount), ("Lustre", lustre.lustre_version)]
    if lustre.import_path:
        facts.append(("imports", lustre.import_path))
    svg = (f'<svg class="fsx" role="img" aria-label="FSx for Lustre" width="150" height="110" viewBox="0 0 150 110" '
           f'xmlns="http://www.w3.org/2000/svg"><path d="M10 20 v70 a65 14 0 0 0 130 0 v-70" class="drum"/>'
           f'<ellipse cx="75" cy="20" rx="65" ry="14" class="top"/>'
           f'<text x="75" y="58" class="big">{big}</text>'
           f'<text x="75" y="76" class="small">{escape(lustre.deployment_type)}</text></svg>')
    return {"title": "FSx for Lustre", "facts": facts, "svg": svg}
