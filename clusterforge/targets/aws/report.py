"""The report's cloud table for target aws: each pool's instance type, GPUs and EFA network."""

from __future__ import annotations

from typing import Any

from clusterforge.catalog import Instance
from clusterforge.load import Loaded


def cloud_pools(loaded: Loaded) -> list[dict[str, Any]]:
    out = []
    for pool in loaded.cluster.pools:
        entry = loaded.catalog.get(pool.hardware)
        if isinstance(entry, Instance):
            efa = pool.efa_interfaces if pool.efa_interfaces is not None else entry.efa_max_interfaces
            network = f"{efa} EFA interfaces, {entry.efa_bandwidth_gbps:,} Gbps" if efa else "ENA"
            out.append({"name": pool.name, "hardware": pool.hardware, "count": pool.count,
                        "gpus": pool.count * entry.gpu_count, "network": network})
    return out
