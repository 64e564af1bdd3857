"""What target aws adds to a cost estimate beyond its instances (priced like any pool's from the `instances` table):
the FSx for Lustre file system the stack creates, billed per GB-month at the rate of its deployment type and
throughput tier (`cost_lines`), how a pool's capacity is bought (`purchase`) and the region whose prices apply
(`price_region`), which clusterforge.cost asks through the kernel."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog import Catalog
from clusterforge.cost.lines import NO_PRICE, in_region, no_price_in, priced
from clusterforge.cost.model import CostLine
from clusterforge.model import Cluster
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.powersave_launch import purchase, region
from clusterforge.targets.aws.prices import fsx_key
from clusterforge.targets.aws.section import aws_section

__all__ = ["cost_lines", "price_region", "purchase"]

ELASTIC_UNPRICED = ("no price for Intelligent-Tiering storage (billed by the data stored in each tier, the "
                    "throughput capacity, the SSD read cache and metadata IOPS, none of them in the price tables)")


def cost_lines(cluster: Cluster, catalog: Catalog) -> Iterator[CostLine]:
    """FSx for Lustre: its provisioned capacity in GB-months (AWS bills the GiB figure the file system is created
    with) at the rate of its deployment type and throughput tier in the blueprint's region (unpriced, and named with
    the region, where the table has that tier only for others). An existing on-prem Lustre costs nothing here."""
    lustre = cluster.storage.lustre
    if not isinstance(lustre, FsxLustre):
        return
    aws = aws_section(cluster)
    if lustre.capacity_gib is None or lustre.elastic:
        yield _elastic_line(lustre, aws.region if aws is not None else None)
        return
    key = fsx_key(lustre.deployment_type, lustre.storage_type, lustre.throughput_mb_s_per_tib)
    tier = f" {lustre.throughput_mb_s_per_tib} MB/s/TiB" if lustre.throughput_mb_s_per_tib else ""
    region = aws.region if aws is not None else None
    quoted = catalog.prices.table("fsx_lustre", region).get(key)
    elsewhere = catalog.prices.table_regions("fsx_lustre", key) if quoted is None else ()
    item = f"FSx for Lustre {lustre.deployment_type} {lustre.storage_type}{tier}"
    named = f"{in_region(item, region, elsewhere)} x {lustre.capacity_gib:,} GB-month" if elsewhere else ""
    yield priced(f"{item}, {lustre.capacity_gib:,} GiB", "storage", float(lustre.capacity_gib), "GB-month", "month",
                 quoted, named,
                 no_price_in(region, f"{item} ({key})", elsewhere), region=region)


def _elastic_line(lustre: FsxLustre, region: str | None) -> CostLine:
    """An Intelligent-Tiering file system, unpriced: it has no provisioned size to bill per GB-month (AWS bills the
    data it stores, by tier, besides its throughput capacity, SSD read cache and metadata IOPS), and the price
    tables hold no rate for any of these. The line names it so the totals say what they leave out."""
    mb_s = lustre.throughput_capacity_mb_s or 0
    item = f"FSx for Lustre {lustre.deployment_type} {lustre.storage_type}, {mb_s:,} MB/s throughput capacity"
    return priced(item, "storage", float(mb_s), "MB/s-month", "month", None,
                  source=f"{ELASTIC_UNPRICED}: {NO_PRICE}", region=region)


# EC2, Capacity Blocks and FSx are priced per region: the one the provider launches in (the blueprint's
# `aws.region`) names whose prices apply
price_region = region
