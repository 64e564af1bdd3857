"""What powering idle on-prem nodes down saves: the energy a power-saved pool's nodes above `count` do not draw
while SLURM holds them powered down. Shown beside the estimate, never subtracted from it: a budget holds the
worst case, every node powered up all month (the power line and COST-001 count that)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from clusterforge.catalog import Catalog, Server
from clusterforge.catalog.price_book import PriceBook
from clusterforge.cost.model import HOURS_PER_MONTH, CostLine
from clusterforge.cost.onprem import Energy, site_energy
from clusterforge.model import Cluster, Pool

# An assumption, not a measurement: the nodes above `count` powered down half of the month. A running cluster
# measures its own share (the hours its burst nodes spent powered down, `idle~` in sinfo) and passes it with
# `clusterforge cost --idle-share` (docs/cost.md).
DEFAULT_IDLE_SHARE = 0.5
NO_IDLE_FIGURE = ("no idle figure: give the server an idle_power_kw in a --catalog entry, or an "
                  "idle_power_fraction under `prices:` (docs/cost.md)")


@dataclass(frozen=True)
class IdleDraw:
    """What one powered-up idle device draws, how that figure was reached, and its provenance."""

    kw: float
    how: str
    date: str
    estimate: bool


def idle_draw(hardware: str, server: Server, book: PriceBook) -> IdleDraw | None:
    """The server's own sourced `idle_power_kw`, else the catalog's `idle_power_fraction` of its max_power_kw
    (its rated draw); None where the catalog has neither."""
    if server.idle_power_kw is not None:
        return IdleDraw(server.idle_power_kw, f"{hardware} idle_power_kw, {server.sources['idle_power_kw']}", "",
                        "[U]" in server.sources["idle_power_kw"])
    fraction = book.idle_power_fraction
    if fraction is None:
        return None
    share = fraction.figure.value
    return IdleDraw(share * server.max_power_kw,
                    f"{share * 100:g} % of {hardware} max_power_kw {server.max_power_kw:g} kW (catalog default "
                    f"idle_power_fraction: {fraction.source})", fraction.figure.date, fraction.figure.estimate)


def power_saved_lines(cluster: Cluster, catalog: Catalog, idle_share: float | None) -> Iterator[CostLine]:
    """One line per power-saved on-prem pool: its nodes above `count` × 730 h × the idle share (the part of the
    month they are powered down) × the idle draw each does not draw × PUE × the tariff the power line uses.
    `idle_share` None: DEFAULT_IDLE_SHARE, which the line then names."""
    site = cluster.site
    if site is None:
        return
    energy = site_energy(site, catalog.prices)
    share = DEFAULT_IDLE_SHARE if idle_share is None else idle_share
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Server) and pool.power_saved and pool.ceiling > pool.count:
            yield _saved(pool, entry, catalog.prices, energy, share, idle_share is None)


def _saved(pool: Pool, server: Server, book: PriceBook, energy: Energy, share: float, default: bool) -> CostLine:
    elastic = pool.ceiling - pool.count
    shown = f"{share * 100:g} %" + (" (default idle share)" if default else "")
    item = (f"power saved: pool {pool.name}, {elastic:,} of {pool.ceiling:,} {pool.hardware} powered down "
            f"{shown} of the month")
    idle = idle_draw(pool.hardware, server, book)
    if idle is None or energy.usd_per_kwh is None:
        why = NO_IDLE_FIGURE if idle is None else "no energy tariff in the site or the catalog"
        return CostLine(item, "power", 0.0, "kWh", 0.0, 0.0, "month", why, "", True)
    item += f", idle {idle.kw:g} kW each x PUE {energy.pue:g}"
    if energy.defaults:
        item += f" (catalog default {' and '.join(energy.defaults)})"
    kwh = elastic * HOURS_PER_MONTH * share * idle.kw * energy.pue
    taken = "an assumption, set with --idle-share" if default else "given with --idle-share"
    sources = (f"idle {idle.kw:g} kW: {idle.how}", f"idle share {share * 100:g} %: {taken}", *energy.sources)
    return CostLine(item, "power", kwh, "kWh", energy.usd_per_kwh, kwh * energy.usd_per_kwh, "month",
                    "; ".join(sources), max((idle.date, *energy.dates)), idle.estimate or energy.estimate or default)
