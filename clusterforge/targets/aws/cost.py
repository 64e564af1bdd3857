"""What target aws adds to a cost estimate beyond its instances (priced like any pool's from the `instances` table):
the FSx for Lustre file system the stack creates, billed per GB-month at the rate of its deployment type and
throughput tier (`Target.cost_lines`)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog import Catalog
from clusterforge.cost.lines import priced
from clusterforge.cost.model import CostLine
from clusterforge.model import Cluster, FsxLustre
from clusterforge.targets.aws.prices import fsx_key


def storage_lines(cluster: Cluster, catalog: Catalog) -> Iterator[CostLine]:
    """FSx for Lustre: its provisioned capacity in GB-months (AWS bills the GiB figure the file system is created
    with) at the rate of its deployment type and throughput tier. An existing on-prem Lustre costs nothing here."""
    lustre = cluster.storage.lustre
    if not isinstance(lustre, FsxLustre):
        return
    key = fsx_key(lustre.deployment_type, lustre.storage_type, lustre.throughput_mb_s_per_tib)
    tier = f" {lustre.throughput_mb_s_per_tib} MB/s/TiB" if lustre.throughput_mb_s_per_tib else ""
    yield priced(f"FSx for Lustre {lustre.deployment_type} {lustre.storage_type}{tier}, {lustre.capacity_gib:,} GiB",
                 "storage", float(lustre.capacity_gib), "GB-month", "month",
                 catalog.prices.table("fsx_lustre").get(key))
