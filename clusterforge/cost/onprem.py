"""On-prem hardware bought once (servers, the fabric's switches and links, racks, PDUs, rack cooling) and the
power it draws every month."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from clusterforge.catalog import Catalog, Server
from clusterforge.catalog.price_book import PriceBook, Quoted
from clusterforge.cost.lines import priced
from clusterforge.cost.model import HOURS_PER_MONTH, CostLine
from clusterforge.model import Cluster, Site
from clusterforge.plan.bom import fabric_bom
from clusterforge.plan.it_load import site_it_kw
from clusterforge.plan.model import Plan


def server_lines(cluster: Cluster, catalog: Catalog) -> Iterator[CostLine]:
    """One line per server pool: devices × the price of one. A power-saved pool buys its ceiling: every node
    SLURM may power up (`max_count`) stands in a rack, `count` of them always on, the rest powered down idle."""
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Server):
            ceiling = (f", all {pool.ceiling:,} bought (max_count), {pool.count:,} always on"
                       if pool.power_saved else "")
            yield priced(f"{pool.hardware} ({entry.description}), pool {pool.name}{ceiling}", "compute",
                         float(pool.ceiling), "server", "once", catalog.prices.hardware.get(pool.hardware),
                         f"{pool.hardware} server x {pool.ceiling:,} (pool {pool.name})", pool=pool.name)


def fabric_lines(plan: Plan, catalog: Catalog) -> Iterator[CostLine]:
    """The fabric's bill of materials (plan/bom.py): switches per tier, and one link (cable and its two
    transceivers) per cable of every tier, priced by the fabric's link speed."""
    for racked in plan.fabrics:
        tree = racked.tree
        bom = fabric_bom(tree)
        for tier in bom:
            if tier.switches:
                yield priced(f"{racked.switch} {tier.tier} switch", "network", float(tier.switches), "switch",
                             "once", catalog.prices.hardware.get(racked.switch),
                             f"{racked.switch} {tier.tier} switch x {tier.switches:,}")
        cables = sum(tier.cables_down for tier in bom)
        if cables:
            speed = tree.port_speed_gbps
            yield priced(f"{speed}G fabric link (cable + 2 transceivers)", "network", float(cables), "link", "once",
                         catalog.prices.links.get(speed), f"{speed}G fabric link x {cables:,}")


def facility_lines(cluster: Cluster, plan: Plan, catalog: Catalog) -> Iterator[CostLine]:
    """The racks that hold part of the cluster, a PDU per feed of each, and each one's rear door or coolant
    unit share, by its cooling kind."""
    site = cluster.site
    if site is None:
        return
    used = [load.rack for load in plan.loads if load.device_count]
    racks = [site.rows[r.row_index].racks[r.rack_index] for r in used]
    if not racks:
        return
    facility = catalog.prices.facility
    yield priced("rack cabinet", "facility", float(len(racks)), "rack", "once", facility.get("rack"),
                 f"rack cabinet x {len(racks):,}")
    feeds = sum(len(rack.feeds) for rack in racks)
    if feeds:
        yield priced("rack PDU, one per feed", "facility", float(feeds), "pdu", "once", facility.get("pdu"),
                     f"rack PDU x {feeds:,}")
    doors = sum(1 for rack in racks if rack.cooling.kind == "rdhx")
    if doors:
        yield priced("rear-door heat exchanger", "facility", float(doors), "rack", "once", facility.get("rdhx"),
                     f"rear-door heat exchanger x {doors:,}")
    loops = sum(1 for rack in racks if rack.cooling.kind == "liquid")
    if loops:
        yield priced("coolant distribution (CDU share)", "facility", float(loops), "rack", "once", facility.get("cdu"),
                     f"coolant distribution share x {loops:,} racks")


@dataclass(frozen=True)
class Energy:
    """What one kWh of IT load costs at the site: its PUE and tariff, else the catalog's defaults, with the
    sources, dates and defaults a line names. `usd_per_kwh` is None where neither the site nor the catalog has
    a tariff."""

    pue: float
    usd_per_kwh: float | None
    defaults: tuple[str, ...]
    sources: tuple[str, ...]
    dates: tuple[str, ...]
    estimate: bool


def site_energy(site: Site, book: PriceBook) -> Energy:
    """The site's `pue` and `energy_usd_per_kwh` where it gives them, else the catalog's defaults."""
    defaults: list[str] = []
    sources: list[str] = []
    dates: list[str] = []
    estimate = False
    if site.pue is not None:
        pue = site.pue
        sources.append(f"PUE {pue:g}: site {site.name}")
    elif book.pue is not None:
        pue = book.pue.figure.value
        defaults.append(f"PUE {pue:g}")
        sources.append(f"PUE {pue:g}: {book.pue.source}")
        dates.append(book.pue.figure.date)
        estimate = estimate or book.pue.figure.estimate
    else:
        pue = 1.0
        defaults.append("PUE 1 (no default in the catalog)")
    tariff: Quoted | None = book.energy_usd_per_kwh
    usd: float | None = None
    if site.energy_usd_per_kwh is not None:
        usd = site.energy_usd_per_kwh
        sources.append(f"${usd:g}/kWh: site {site.name}")
    elif tariff is not None:
        usd = tariff.price.usd
        defaults.append(f"${usd:g}/kWh")
        sources.append(f"${usd:g}/kWh: {tariff.source}")
        dates.append(tariff.price.date)
        estimate = estimate or tariff.price.estimate
    return Energy(pue, usd, tuple(defaults), tuple(sources), tuple(dates), estimate)


def power_line(cluster: Cluster, plan: Plan, catalog: Catalog) -> Iterator[CostLine]:
    """IT kW (the design load PWR-007 holds to the contract) × PUE × $/kWh × 730 h, with the site's tariff and
    PUE where it gives them, else the catalog's defaults, which the line then names."""
    site = cluster.site
    it_kw = site_it_kw(cluster, plan, catalog)
    if site is None or it_kw <= 0:
        return
    energy = site_energy(site, catalog.prices)
    item = f"power: IT {it_kw:.1f} kW x PUE {energy.pue:g}"
    kwh = it_kw * energy.pue * HOURS_PER_MONTH
    if energy.usd_per_kwh is None:
        yield priced(item, "power", kwh, "kWh", "month", None, f"power, {it_kw:.1f} kW IT load (no tariff)")
        return
    if energy.defaults:
        item += f" (catalog default {' and '.join(energy.defaults)})"
    yield CostLine(item, "power", kwh, "kWh", energy.usd_per_kwh, kwh * energy.usd_per_kwh, "month",
                   "; ".join(energy.sources), max(energy.dates, default=""), energy.estimate)
