"""Cloud pools and what a cloud target sells beside them (its managed storage, its `cost.py`'s `cost_lines`): billed by
the
hour or the GB-month, so every line recurs monthly."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from clusterforge.catalog import Catalog, Instance
from clusterforge.catalog.prices import PURCHASES, Purchase
from clusterforge.cost.lines import in_region, no_price_in, priced
from clusterforge.cost.model import HOURS_PER_MONTH, CostLine
from clusterforge.model import Cluster, Pool
from clusterforge.target_kernel import in_use, pool_target, stage_function


class Purchases(Protocol):
    """How a cloud target's deployment buys a pool's capacity (its `cost.py`'s `purchase`), in the price tables'
    words (`capacity-block`, `reservation`, `on-demand`); None: the target does not say."""

    def __call__(self, cluster: Cluster, pool: Pool) -> str | None:
        ...


class PriceRegion(Protocol):
    """The region a target's blueprint deploys to (its `cost.py`'s `price_region`), whose prices its pools and
    services are billed at: the price book prices them from that region's table and names them unpriced where it has
    none, never at another region's figure. A target without it has prices that do not differ by region (on-prem)."""

    def __call__(self, cluster: Cluster) -> str | None:
        ...


def price_region(cluster: Cluster, pool: Pool) -> str | None:
    """The region the pool's target prices it in (None: prices for every region apply)."""
    region: PriceRegion | None = stage_function(pool_target(cluster, pool), "cost", "price_region")
    return None if region is None else region(cluster)


def purchase_of(cluster: Cluster, pool: Pool) -> Purchase:
    """The pool's own `purchase`, else the blueprint's `cost.purchase`, else how its target's deployment buys the
    capacity (the Capacity Block or reservation a blueprint names), else on demand."""
    if pool.purchase is not None:
        return pool.purchase
    if cluster.cost.purchase is not None:
        return cluster.cost.purchase
    buys: Purchases | None = stage_function(pool_target(cluster, pool), "cost", "purchase")
    bought = None if buys is None else buys(cluster, pool)
    return next((p for p in PURCHASES if p == bought), "on-demand")


def instance_lines(cluster: Cluster, catalog: Catalog) -> Iterator[CostLine]:
    """One line per instance pool: count × 730 instance-hours at the rate of its purchase option. A power-saved
    pool is priced at its ceiling, every node powered up all month: what it may cost, which a budget must hold
    (SLURM powers nodes beyond `count` up whenever jobs wait, and nothing else caps the bill).

    The rate is the one for the region the pool's target deploys to (its `cost.py`'s `price_region`); where the table
    prices the type only in other regions, the line is unpriced and names the region, never priced at theirs."""
    for pool in cluster.pools:
        if not isinstance(catalog.get(pool.hardware), Instance):
            continue
        purchase = purchase_of(cluster, pool)
        region = price_region(cluster, pool)
        quoted = catalog.prices.instance_hour(pool.hardware, purchase, region)
        elsewhere = catalog.prices.instance_regions(pool.hardware, purchase) if quoted is None else ()
        what = f"{pool.hardware} {purchase}"
        ceiling = f", all {pool.ceiling:,} powered up (max_count)" if pool.power_saved else ""
        yield priced(f"{what}, pool {pool.name}{ceiling}", "compute", float(pool.ceiling * HOURS_PER_MONTH),
                     "instance-hour", "month", quoted,
                     f"{in_region(what, region, elsewhere)} x {pool.ceiling:,} (pool {pool.name})",
                     no_price_in(region, what, elsewhere), pool=pool.name, region=region)


class CostLines(Protocol):
    """What cost asks of a target that sells something beside its instances (its `cost.py`'s `cost_lines`): the
    lines of it, priced from the target's own tables."""

    def __call__(self, cluster: Cluster, catalog: Catalog) -> Iterable[CostLine]:
        ...


def storage_lines(cluster: Cluster, catalog: Catalog) -> Iterator[CostLine]:
    """What each target in use sells beside its instances, as it prices it (a managed file system); an existing
    on-prem Lustre costs nothing here."""
    for target in in_use(cluster):
        own: CostLines | None = stage_function(target, "cost", "cost_lines")
        if own is not None:
            yield from own(cluster, catalog)
