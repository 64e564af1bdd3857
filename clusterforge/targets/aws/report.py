"""The report's cloud table for target aws: each pool's instance type, GPUs and EFA network."""

from __future__ import annotations

from typing import Any

from clusterforge.catalog import Catalog, Instance
from clusterforge.model import Cluster
from clusterforge.targets.aws.efa import efa_interfaces


def cloud_pools(cluster: Cluster, catalog: Catalog) -> list[dict[str, Any]]:
    out = []
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Instance):
            efa = efa_interfaces(pool, entry)
            network = f"{efa} EFA interfaces, {entry.efa_bandwidth_gbps:,} Gbps" if efa else "ENA"
            out.append({"name": pool.name, "hardware": pool.hardware, "count": pool.count,
                        "gpus": pool.count * entry.gpu_count, "network": network})
    return out
