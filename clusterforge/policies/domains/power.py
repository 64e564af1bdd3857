"""Power rules: feeds, A/B redundancy, PSUs, nameplate draw, phase balance, panels and the site budget."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from pydantic import Field

from clusterforge.model import Rack
from clusterforge.physics.budget import exceeds, steps
from clusterforge.physics.electrical import describe, stronger_feeds
from clusterforge.physics.failures import NORMAL, Survivors, weakest_survivors, worst_cases
from clusterforge.physics.power_grid import grid
from clusterforge.plan import RackLoad
from clusterforge.plan.it_load import site_it_kw
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context, rack_ref
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import FEEDS, PLACED, RACK, Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("power", "Power", 10)

SOURCE_NEC = "NEC 210.19/210.20 continuous-load (80 %) rule; NetBox available_power model"
# the site's power topology: what each panel and power source draws from (docs/power-topologies.md)
TOPOLOGY = ("site.panels[].{name,voltage,amps,phase,fed_by,catcher}",
            "site.power_sources[].{name,kind,kw,fed_by,catcher}")


def redundant(ctx: Context, rack: Rack) -> bool:
    """The rack has feeds on both the A and the B side (2N)."""
    return bool(ctx.side_kw(rack, "A") and ctx.side_kw(rack, "B"))


@rule("PWR-001", "error", DOMAIN, "Feed not overloaded in normal operation", SOURCE_NEC, needs_site=True,
      inputs=Inputs((FEEDS, *PLACED), ("max_power_kw",), ("electrical",),
             "an `info` finding lists racks with devices but no feeds (power not checked)"))
def feed_normal_load(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each feed carries its share of the rack (split evenly over its feeds) within its usable rating.

    Decided from the design alone: an A/B rack whose feed is overloaded with both sides up also fails PWR-002,
    and both findings stand (the views group them by rack), so skipping or waiving one never hides the other.
    """
    unfed: list[str] = []
    e = ctx.config.electrical
    for load, rack in ctx.racks():
        if not load.power_kw:
            continue
        if not rack.feeds:
            unfed.append(rack.name)
            continue
        share = load.power_kw / len(rack.feeds)
        index = min(range(len(rack.feeds)), key=lambda i: ctx.feed_kw(rack, i))
        feed, usable = rack.feeds[index], ctx.feed_kw(rack, index)
        if exceeds(share, usable, "kW"):
            yield Draft(
                (*load.rack.path, "feeds", index),
                f"rack {rack.name} draws {load.power_kw:.1f} kW over {len(rack.feeds)} feeds ({share:.1f} kW each); "
                f"feed {feed.name} gives {usable:.1f} kW usable ({describe(feed)} × {e.derate:g})",
                "move a server to another rack or use larger feeds", share, usable, "kW", where=rack_ref(load))
    if unfed:
        shown = ", ".join(unfed[:5]) + (f" and {len(unfed) - 5} more" if len(unfed) > 5 else "")
        yield Draft(("site",), f"{len(unfed)} racks with devices list no feeds, power not checked: {shown}",
                    "add feeds: [{name, side, voltage, amps, phase}] to each rack", level="info")


class RedundancySettings(Settings):
    warn_fraction: float = Field(0.9, gt=0, le=1, description=(
        "warn when a rack uses this share of one side (or of the feeds its weakest single failure leaves)"))


@rule("PWR-002", "error", DOMAIN, "Rack survives the loss of any one feed path (A/B, 2N, N+1 cords)",
      "NVIDIA DGX SuperPOD RA: no single point of failure, either side alone must carry the rack; Uptime Institute "
      "Tier III/IV: any one element lost; Schneider Electric White Paper 75 (2N, distributed and block redundant)",
      RedundancySettings, needs_site=True,
      inputs=Inputs((FEEDS, f"{RACK}.feeds[].panel", *TOPOLOGY, *PLACED), ("max_power_kw",), ("electrical",),
             "a `warning` when a rack uses `warn_fraction` or more of what its weakest failure leaves"))
def ab_redundancy(ctx: Context, settings: RedundancySettings) -> Iterator[Draft]:
    """Each single failure upstream of a rack (a side, a panel, a UPS) leaves feeds that carry the whole rack:
    load ≤ Σ usable of the feeds left. For A/B feeds either side alone must carry the whole rack: min(usable A,
    usable B), not the sum; a rack with N+1 cords on separately fed panels is judged per cord lost."""
    topology = grid(ctx.site, ctx.config.electrical)
    weakest: dict[tuple[object, ...], Survivors | None] = {}  # per rack make-up: a hall repeats a few
    for load, rack in ctx.racks():
        kw = load.power_kw
        if not kw or not rack.feeds:
            continue
        key = tuple([(f.panel, f.side, f.voltage, f.amps, f.phase) for f in rack.feeds])
        if key in weakest:
            case = weakest[key]
        else:
            cords = tuple([topology.cord(f) for f in rack.feeds])
            case = weakest[key] = weakest_survivors(topology, cords, rack.feeds, ctx.config.electrical)
        if case is not None and (not case.left or exceeds(kw, settings.warn_fraction * case.usable_kw, "kW")):
            yield from _survives(ctx, settings, load, rack, topology.labels[case.lost], case)


def _survives(ctx: Context, settings: RedundancySettings, load: RackLoad, rack: Rack, lost: str, case: Survivors
              ) -> Iterator[Draft]:
    """PWR-002's finding for one rack and its weakest failure, in A/B terms where that failure leaves one side."""
    kw, derate, path = load.power_kw, ctx.config.electrical.derate, (*load.rack.path, "feeds")
    a, b = ctx.side_kw(rack, "A"), ctx.side_kw(rack, "B")
    if not case.left:
        if not a or not b:
            missing = "B" if a else "A"
            yield Draft(path, f"rack {rack.name} has no {missing}-side feed: losing its only side drops {kw:.1f} kW",
                        f"add a {missing}-side feed", kw, 0, "kW", where=rack_ref(load))
        else:
            yield Draft(path, f"rack {rack.name} loses all {len(rack.feeds)} feeds when {lost} is lost: "
                        f"{kw:.1f} kW dropped", "land its feeds on panels that no single failure takes out together "
                        "(different panels, fed from different sources)", kw, 0, "kW", where=rack_ref(load))
        return
    left = [rack.feeds[i] for i in case.left]
    usable, side = case.usable_kw, left[0].side
    plural = "s" if len(left) > 1 else ""
    if a and b and all(f.side == side for f in left) and len(left) == sum(f.side == side for f in rack.feeds):
        what = f"side {side}"  # the failure leaves one whole side: said as A/B racks always were
        carries, warned = f"either side alone must carry it but side {side} gives", f"what side {side} alone can carry"
    else:
        what = f"feed{plural} {', '.join(f.name for f in left)}"
        carries = f"when {lost} is lost, {what} must carry it but give{'' if plural else 's'}"
        warned = f"what {what} can carry when {lost} is lost"
    if exceeds(kw, usable, "kW"):
        yield Draft(path, f"rack {rack.name} draws {kw:.1f} kW; {carries} {usable:.1f} kW usable "
                    f"({', '.join(describe(f) for f in left)} × {derate:g})",
                    f"move a server to another rack, or feed {what} for {kw:.1f} kW: "
                    f"{stronger_feeds(kw, left, ctx.config.electrical)}", kw, usable, "kW", where=rack_ref(load))
    elif exceeds(kw, settings.warn_fraction * usable, "kW"):
        yield Draft(path, f"rack {rack.name} draws {kw:.1f} kW, {kw / usable:.0%} of {warned} "
                    f"({usable:.1f} kW)", "little headroom after a feed loss", kw, usable, "kW", level="warning",
                    where=rack_ref(load))


@rule("PWR-003", "warning", DOMAIN, "Server PSU redundancy survives a feed loss",
      "NVIDIA DGX H100 / B200 user guides (N+M PSUs; DGX H100 runs degraded on 3 of 4+2); Dell PowerEdge XE9680 "
      "(six 2,800 W PSUs, 5+1 or 3+3 fault tolerant redundancy with GPU power-brake)", needs_site=True,
      inputs=Inputs((f"{RACK}.feeds[].side", *PLACED), ("psus", "max_power_kw")))
def psu_redundancy(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Servers split their N+M PSUs over A/B: the PSUs either side keeps alone must be at least N and, where the
    PSU rating is recorded, deliver the server's maximum draw (a declared draw above the nameplate included)."""
    racks_by_pool: dict[str, int] = defaultdict(int)
    for load, rack in ctx.racks():
        if redundant(ctx, rack):
            for placed, _ in load.servers:
                racks_by_pool[placed.pool] += 1
    for i, pool in enumerate(ctx.cluster.pools):
        server = ctx.server(pool)
        if server is None or pool.name not in racks_by_pool:
            continue
        psus = server.psus
        per_side = psus.count // 2
        draw_w = steps(ctx.device_kw(pool), "kW")
        needed = max(psus.required, -(-draw_w // psus.watts) if psus.watts else 0)
        if per_side >= needed:
            continue
        racks = racks_by_pool[pool.name]
        where = f"{racks} rack{'s' if racks != 1 else ''}"
        left = (f"{per_side} × {psus.watts:,} W = {per_side * psus.watts:,} W for its {draw_w / 1000:g} kW maximum"
                if psus.watts else f"{per_side} PSUs")
        yield Draft(
            ("pools", i, "hardware"),
            f"{pool.hardware} has {psus.count} PSUs ({needed} needed) split {per_side}/{psus.count - per_side} over "
            f"A/B: a feed loss leaves {left}, so pool {pool.name} runs degraded in {where}",
            "accept reduced performance (power capping) during a feed outage, or feed the PSUs from three sources",
            per_side, needed, "PSUs", minimum=True)


@rule("PWR-004", "error", DOMAIN, "Nameplate draw is used",
      "NVIDIA user guides (DGX H100 10.2 kW, DGX B200 14.3 kW maximum)",
      inputs=Inputs(("pools[].{hardware,max_power_kw}",), ("max_power_kw",)))
def nameplate_draw(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A pool's declared max_power_kw may raise the catalog's nameplate draw but never lower it."""
    for i, pool in enumerate(ctx.cluster.pools):
        server = ctx.server(pool)
        if server is not None and pool.max_power_kw is not None and pool.max_power_kw < server.max_power_kw:
            yield Draft(("pools", i, "max_power_kw"),
                        f"pool {pool.name} declares {pool.max_power_kw:g} kW per {pool.hardware}, below its "
                        f"nameplate maximum of {server.max_power_kw:g} kW",
                        "plan with the nameplate; power capping is an operating choice, not a design budget",
                        pool.max_power_kw, server.max_power_kw, "kW")


class BalanceSettings(Settings):
    max_imbalance: float = Field(0.2, gt=0, description="(max leg − min leg) / mean leg; default per NetBox legs")


def spread_over_legs(groups: dict[float, int], feeds: int) -> list[list[float]]:
    """Legs of each feed after placing PSUs (kW each → count) round-robin over feeds, each on its lightest leg.

    Equal PSUs, the usual case, land n // 3 or n // 3 + 1 per leg: computed directly, not one by one.
    """
    legs = [[0.0, 0.0, 0.0] for _ in range(feeds)]
    if len(groups) == 1:
        [(kw, count)] = groups.items()
        for f in range(feeds):
            n = count // feeds + (1 if f < count % feeds else 0)
            legs[f] = [kw * (n // 3 + (1 if leg < n % 3 else 0)) for leg in range(3)]
        return legs
    n = 0
    for kw in sorted(groups, reverse=True):
        for _ in range(groups[kw]):
            target = legs[n % feeds]
            target[target.index(min(target))] += kw
            n += 1
    return legs


Imbalance = tuple[int, tuple[float, ...], float]  # feed index, its three legs (kW), (max − min) / mean


def _imbalanced_feeds(feeds: tuple[tuple[str, int], ...], psus: tuple[tuple[float, int], ...],
                      limit: float) -> list[Imbalance]:
    """The three-phase feeds of one rack make-up (each feed's side and phases; PSU kW → count per side) whose
    legs differ by more than `limit` of their mean."""
    out: list[Imbalance] = []
    for side in ("A", "B"):
        indexes = [i for i, (s, _) in enumerate(feeds) if s == side]
        if not indexes or any(feeds[i][1] != 3 for i in indexes):
            continue
        for index, legs in zip(indexes, spread_over_legs(dict(psus), len(indexes)), strict=True):
            mean = sum(legs) / 3
            if mean and exceeds(imbalance := (max(legs) - min(legs)) / mean, limit, "share"):
                out.append((index, tuple(legs), imbalance))
    return out


@rule("PWR-005", "warning", DOMAIN, "Three-phase leg balance", "NetBox per-leg power model; threshold is a default",
      BalanceSettings, needs_site=True,
      inputs=Inputs((f"{RACK}.feeds[].{{side,phase}}", *PLACED), ("psus", "max_power_kw")))
def leg_balance(ctx: Context, settings: BalanceSettings) -> Iterator[Draft]:
    """PSUs on a three-phase feed, spread over its legs as evenly as possible, differ by at most 20 % of the mean."""
    # worked out once per distinct rack make-up: a hall repeats a few kinds of rack thousands of times
    psu_kw = {name: ctx.device_kw(pool) for name, pool in ctx.pools.items()}
    outcomes: dict[tuple[object, ...], list[Imbalance]] = {}
    for load, rack in ctx.racks():
        feeds = tuple((f.side, f.phase) for f in rack.feeds)
        servers = tuple((placed.pool, placed.count, server.psus.count) for placed, server in load.servers)
        found = outcomes.get(key := (feeds, servers))
        if found is None:
            groups: dict[float, int] = {}
            for pool, count, psus in servers:  # each side carries half of each server's PSUs
                kw = psu_kw[pool] / psus
                groups[kw] = groups.get(kw, 0) + count * (psus // 2)
            found = outcomes[key] = _imbalanced_feeds(feeds, tuple(sorted(groups.items())), settings.max_imbalance)
        for index, legs, imbalance in found:
            yield Draft(
                (*load.rack.path, "feeds", index),
                f"feed {rack.feeds[index].name} legs carry {'/'.join(f'{x:.1f}' for x in legs)} kW: "
                f"{imbalance:.0%} imbalance", "add or move single-phase loads to the light legs",
                imbalance * 100, settings.max_imbalance * 100, "%", where=rack_ref(load))


@rule("PWR-006", "error", DOMAIN, "Panel, busway and UPS load with any one element lost",
      f"{SOURCE_NEC}; Uptime Institute Tier III/IV (any one element lost); Schneider Electric White Paper 75 "
      "(2N, distributed redundant, block redundant with a catcher)", needs_site=True,
      inputs=Inputs((*TOPOLOGY, f"{RACK}.feeds[].{{panel,side}}", *PLACED), ("max_power_kw",), ("electrical",),
             "each panel's and power source's worst case names the element lost (docs/power-topologies.md)"))
def panel_aggregate(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each panel and power source carries its load within its rating in normal operation and with any one
    element lost (a side, a panel, a UPS): racks move their load to the cords they keep. The worst case is
    reported, naming the element lost."""
    site, e = ctx.site, ctx.config.electrical
    topology = grid(site, e)
    if not topology.declared:
        return
    racks = ((load.power_kw, tuple([topology.cord(f) for f in rack.feeds])) for load, rack in ctx.racks())
    panels = len(site.panels)
    for i, case in enumerate(worst_cases(topology, racks)):
        usable = topology.usable_kw[i]
        if usable is None or not exceeds(case.kw, usable, "kW"):
            continue
        when = "in normal operation" if case.lost == NORMAL else f"when {topology.labels[case.lost]} is lost"
        hint = "move feeds to another panel or upgrade it" if i < panels else \
            "move panels to another source or raise its rating"
        if case.lost >= topology.declared:
            side = topology.names[case.lost]
            hint += (f"; side {side} stands for the path of every {side} cord on a panel without fed_by: declare "
                     f"what feeds each panel if side {side} is no single path (docs/power-topologies.md)")
        if i < panels:
            panel = site.panels[i]
            message = (f"panel {panel.name} carries {case.kw:.1f} kW of {usable:.1f} kW usable {when} "
                       f"({describe(panel)} × {e.derate:g})")
            where: tuple[str | int, ...] = ("site", "panels", i)
        else:
            message = f"{topology.labels[i]} carries {case.kw:.1f} kW of {usable:.1f} kW rated {when}"
            where = ("site", "power_sources", i - panels)
        yield Draft(where, message, hint, case.kw, usable, "kW")


@rule("PWR-007", "error", DOMAIN, "Site power budget", "The Green Grid PUE definition (WP#49)", needs_site=True,
      inputs=Inputs(("site.{contracted_it_kw,utility_kw,pue}", "pools[].{hardware,count,max_power_kw}",
             "fabric.switch"), ("max_power_kw",)))
def site_budget(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Σ IT kW (servers and fabric switches) ≤ contracted IT kW, and Σ IT kW × PUE ≤ utility kW."""
    it_kw = site_it_kw(ctx.cluster, ctx.plan, ctx.catalog)  # every fabric on the site, as the cost of power uses
    site = ctx.site
    if site.contracted_it_kw is not None and exceeds(it_kw, site.contracted_it_kw, "kW"):
        yield Draft(("site", "contracted_it_kw"),
                    f"the cluster draws {it_kw:.0f} kW of IT load (nameplate, switches included); the site contract "
                    f"is {site.contracted_it_kw:g} kW", "reduce the node count or raise the contract", it_kw,
                    site.contracted_it_kw, "kW")
    if site.utility_kw is not None and site.pue is not None and exceeds(it_kw * site.pue, site.utility_kw, "kW"):
        yield Draft(("site", "utility_kw"),
                    f"{it_kw:.0f} kW IT × PUE {site.pue:g} = {it_kw * site.pue:.0f} kW exceeds the utility "
                    f"supply of {site.utility_kw:g} kW", "reduce the load or improve cooling efficiency",
                    it_kw * site.pue, site.utility_kw, "kW")


class ProportionSettings(Settings):
    max_ratio: float = Field(100, gt=1, le=1e6, description="warn when a site figure is this many times the design's")


@rule("PWR-008", "warning", DOMAIN, "Site power figures in proportion to the design",
      "a unit slip (W written for kW) passes every budget rule silently; a contract 100 times the load is rare",
      ProportionSettings, needs_site=True,
      inputs=Inputs(("site.{contracted_it_kw,utility_kw,pue}", "pools[].{hardware,count,max_power_kw}",
             "fabric.switch"), ("max_power_kw",), (), "`max_ratio`: how many times the design a figure may be"))
def site_figures_in_proportion(ctx: Context, settings: ProportionSettings) -> Iterator[Draft]:
    """A contracted IT kW or utility kW more than `max_ratio` times what the design draws is most likely in the
    wrong unit (W for kW): the budget PWR-007 holds the design to would then be no budget at all. Not where the
    site is a file included by several teams' blueprints: its figures are the whole facility's."""
    if ("site",) in ctx.loaded.source.includes:
        return  # a site file shared by several teams: its contract is for all of them, not this design alone
    it_kw = site_it_kw(ctx.cluster, ctx.plan, ctx.catalog)
    if it_kw <= 0:
        return
    site = ctx.site
    figures = (("contracted_it_kw", site.contracted_it_kw, it_kw, "IT load"),
               ("utility_kw", site.utility_kw, it_kw * (site.pue or 1.0), "facility load (IT × PUE)"))
    for key, given, design, what in figures:
        if given is not None and given > settings.max_ratio * design:
            yield Draft(("site", key), f"site {key} is {given:,.0f} kW, {given / design:,.0f} times the design's "
                        f"{what} of {design:,.1f} kW: is it in W rather than kW?",
                        f"give {key} in kW (the budget rule PWR-007 checks the design against it)", given,
                        settings.max_ratio * design, "kW")
