"""The visual report: one self-contained HTML page of racks, power and heat, fabric, findings and materials.

It draws the numbers the policies use (the same plan, loads, feed capacities and cooling defaults), so a
reviewer sees on the rack what the check says about it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

from markupsafe import Markup

from clusterforge.blueprint.load import Loaded
from clusterforge.catalog import Catalog, Server
from clusterforge.files.paths import report_path
from clusterforge.model import Cluster, LiquidCooling, Rack
from clusterforge.pipeline.analysis import Analysis
from clusterforge.plan import Plan, RackLoad
from clusterforge.plan.capacity import liquid_capacity_kw, n_plus_one_kw, own_cdus, room_heat_kw
from clusterforge.policies.context import Context
from clusterforge.policies.findings import RackRef
from clusterforge.report.cost import cost_panel
from clusterforge.report.counts import size_cards
from clusterforge.report.elevation import SWITCH_COLOUR, pool_colours, rack_svg
from clusterforge.report.fabric import fabric_svg
from clusterforge.report.findings import LISTED, summarise
from clusterforge.report.measured import Measured, ordered
from clusterforge.report.pools import pool_facts, pool_svg
from clusterforge.report.rows import (
    STANDING_WORDS,
    STANDINGS,
    RackBlock,
    Row,
    group_rows,
    rack_blocks,
    racks_to_draw,
    standing,
)
from clusterforge.report.words import agree, counted
from clusterforge.target_kernel import in_use, pool_target, stage_function

MAX_RACKS = 200  # racks drawn by default: about 25,000 px of page; the rows table sums them all

@dataclass(frozen=True)
class Bar:
    label: str
    used: float
    limit: float
    unit: str = "kW"

    @property
    def share(self) -> float:
        return self.used / self.limit if self.limit else (1.0 if self.used else 0.0)

    @property
    def css(self) -> str:
        return "bad" if self.share > 1 else "warn" if self.share >= 0.8 else "ok"

    @property
    def text(self) -> str:
        return f"{self.used:.1f} / {self.limit:.1f} {self.unit}" if self.limit else f"{self.used:.1f} {self.unit}"


def _bar(b: Bar) -> Markup:
    width = min(100.0, b.share * 100)
    html = '<div class="bar" title="{}: {} ({:.0%})"><span class="{}" style="width:{:.1f}%"></span></div>'
    return Markup(html).format(b.label, b.text, b.share, b.css, width)


@dataclass
class _Site:
    """The hall as the page draws it: a card per drawn rack, the rows' heat bars, the racks drawn, their blocks."""

    cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    drawn: list[str] = field(default_factory=list)
    blocks: list[RackBlock] = field(default_factory=list)


def _rack_card(ctx: Context, load: RackLoad, rack: Rack, by_rack: tuple[Counter[str], Counter[str]],
               colours: dict[str, str], hardware: dict[str, str], draw: Any) -> dict[str, Any]:
    """One drawn rack's card: its power and heat bars (and measured draw), its finding counts, its drawing."""
    errors_by_rack, warnings_by_rack = by_rack
    a, b = ctx.side_kw(rack, "A"), ctx.side_kw(rack, "B")
    air_cap = ctx.config.cooling.air_capacity_kw(rack.cooling.kind, rack.cooling.air_kw)
    bars = [Bar("power vs side A", load.power_kw, a), Bar("power vs side B", load.power_kw, b),
            Bar(f"air heat vs {rack.cooling.kind}", load.air_heat_kw, air_cap)]
    if isinstance(rack.cooling, LiquidCooling):
        what = "in-rack CDUs (N+1)" if own_cdus(rack) else "loop"
        bars.append(Bar(f"liquid heat vs {what}", load.liquid_heat_kw, liquid_capacity_kw(rack.cooling)))
    if draw is not None:
        bars.append(Bar("measured draw", draw.measured_kw, draw.budget_kw))
    return {"name": rack.name, "bars": bars, "errors": errors_by_rack.get(rack.name, 0),
            "warnings": warnings_by_rack.get(rack.name, 0),
            "standing": standing(rack.name, errors_by_rack, warnings_by_rack),
            "svg": rack_svg(load, rack, colours, hardware, errors_by_rack.get(rack.name, 0) > 0),
            "u": f"{load.u_used + rack.reserved_u}/{rack.u_height}U",
            "kg": f"{rack.tare_weight_kg + load.weight_kg:.0f}/{rack.max_weight_kg:g} kg"}


def _site(ctx: Context, cluster: Any, verdict: Any, colours: dict[str, str], max_racks: int,
          measured: Measured | None) -> _Site:
    """The racks worth drawing (those with findings first, up to `max_racks`), their cards and the rows' bars."""
    site = _Site()
    if cluster.site is None:
        return site
    by_rack = (Counter(f.where.rack for f in verdict.findings if f.level == "error" and isinstance(f.where, RackRef)),
               Counter(f.where.rack for f in verdict.findings
                       if f.level == "warning" and isinstance(f.where, RackRef)))
    measured_racks = {d.name: d for d in measured.racks} if measured is not None else {}
    hardware = {p.name: p.hardware for p in cluster.pools}
    pairs = ctx.racks()
    site.drawn = racks_to_draw([rack.name for _, rack in pairs], *by_rack, max_racks)
    drawing = set(site.drawn)
    row_of: dict[str, str] = {}
    by_row: dict[int, list[tuple[RackLoad, Rack]]] = {}
    for load, rack in pairs:
        by_row.setdefault(load.rack.row_index, []).append((load, rack))
        if rack.name in drawing:
            row_of[rack.name] = load.rack.row
            site.cards[rack.name] = _rack_card(ctx, load, rack, by_rack, colours, hardware,
                                               measured_racks.get(rack.name))
    site.blocks = rack_blocks((name, row_of[name], site.cards[name]["standing"]) for name in site.drawn)
    for ri, row in enumerate(cluster.site.rows):
        loads = by_row.get(ri, [])
        crah, cdu = row.cooling.crah_kw, row.cooling.cdu_kw
        site.rows.append(Row(
            row.name, len(row.racks), sum(ld.power_kw for ld, _ in loads),
            Bar("air", sum(room_heat_kw(ld.air_heat_kw, rk) for ld, rk in loads), n_plus_one_kw(crah)),
            Bar("liquid", sum(ld.liquid_heat_kw for ld, rk in loads if not own_cdus(rk)), n_plus_one_kw(cdu))))
    return site


def _size_cards(analysis: Analysis, ctx: Context, switch: str, switch_kw: float) -> list[dict[str, Any]]:
    """The header's cards: nodes and GPUs, and for a site its IT load, racks and facility load."""
    cluster, plan = analysis.loaded.cluster, analysis.plan
    cards = size_cards(analysis.cluster, plan)  # the plan's nodes (an NVL72 rack is 18 trays) and their GPUs, alike
    if cluster.site is not None:
        site, fabric = cluster.site, plan.fabric
        it_kw = sum(ctx.device_kw(p) * p.count for p in cluster.pools)
        total_kw = it_kw + (fabric.switches * switch_kw if fabric else 0.0)
        contract = f"of {site.contracted_it_kw:,.0f} kW contracted" if site.contracted_it_kw else ""
        cards += [{"label": "IT load (nameplate)", "value": f"{total_kw:,.0f} kW", "note": contract},
                  {"label": "racks", "value": f"{len(plan.loads):,}", "note": f"in {len(site.rows)} rows"}]
        if site.pue:
            cards.append({"label": "facility load (× PUE)", "value": f"{total_kw * site.pue:,.0f} kW"})
    return cards


def build(analysis: Analysis, max_racks: int = MAX_RACKS, drawings_only: bool = False,
          measured: Measured | None = None) -> str:
    """The whole page as a string (the CLI writes it atomically): the analysis every command shares, drawn.

    `drawings_only` leaves out everything but the header and the drawings (racks, or a cloud's pools and
    storage): the page `report -f png` shoots. `measured` (report.measured.compare) adds planned beside
    measured power per rack and feed, and a bar of measured against budget on each drawn rack."""
    from jinja2 import Environment

    loaded, verdict, plan = analysis.loaded, analysis.verdict, analysis.plan
    cluster = loaded.cluster
    ctx = Context(loaded, plan, analysis.policy.config)
    colours = pool_colours([p.name for p in cluster.pools])
    shown_findings = [(f, "waived" if f.waiver else f.level) for f in (*verdict.findings, *verdict.waived)
                      if f.level != "info"]
    site = _site(ctx, cluster, verdict, colours, max_racks, measured)
    total_racks = len(plan.loads)
    fabric = plan.fabric
    switch = getattr(cluster.fabric, "switch", "")
    switch_kw = getattr(loaded.catalog.get(switch), "max_power_kw", 0.0) if fabric and switch else 0.0
    pools = [{"row": p, "svg": pool_svg(p, colours.get(str(p.get("name")), "#999")), "facts": pool_facts(p),
              "colour": colours.get(str(p.get("name")), "#999")} for p in _cloud_pools(cluster, loaded)]
    shown = set(site.drawn)
    racked = {placed.pool for load in plan.loads if load.rack.name in shown for placed in load.rack.devices}
    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(
        (resources.files("clusterforge.report") / "page.html.j2").read_text(encoding="utf-8"))
    return template.render(
        name=cluster.name, target=cluster.target, source=loaded.file, failed=verdict.failed,
        counts={"error": verdict.count("error"), "warning": verdict.count("warning"), "waived": len(verdict.waived)},
        drawings_only=drawings_only, cards=_size_cards(analysis, ctx, switch, switch_kw), rows=group_rows(site.rows),
        rack_blocks=[{"standing": b.standing, "row": b.row, "racks": [site.cards[name] for name in b.racks]}
                     for b in site.blocks],
        standings=_standings(site.blocks), standing_words=STANDING_WORDS, counted=counted, agree=agree,
        colours={pool: colour for pool, colour in colours.items() if pool in racked},  # the legend: pools drawn
        hybrid=cluster.site is not None, shown_racks=len(site.drawn),
        hidden_racks=max(0, total_racks - len(site.drawn)), switch_colour=SWITCH_COLOUR,
        switches=_switch_note(plan, switch),
        fabric_svg=fabric_svg(fabric, switch, sum(p.count for p in cluster.pools if p.role == "compute"))
        if fabric else "",
        fabric_note=_fabric_note(fabric, switch) if fabric else "",
        pools=pools, storage=_storage(cluster),
        findings=summarise(shown_findings, shown), findings_total=len(shown_findings), listed=LISTED,
        bom=_bom(loaded, plan, switch, switch_kw), bar=_bar, cost=None if drawings_only else cost_panel(analysis),
        measured=None if measured is None or drawings_only else _measured_view(measured, max_racks))


def _standings(blocks: list[RackBlock]) -> str:
    """How many drawn racks fail, warn and pass, for the note above the elevations (`2 failing, 1 with warnings,
    7 passing`), when they differ."""
    per = Counter(b.standing for b in blocks for _ in b.racks)
    if len(per) < 2:  # one standing: there is no order to explain
        return ""
    return ", ".join(f"{per[s]:,} {STANDING_WORDS[s]}" for s in STANDINGS if per[s])


def _measured_view(measured: Measured, limit: int) -> dict[str, Any]:
    """The planned-beside-measured section: racks and feeds over budget first, then by share, each table at most
    `limit` lines (the drawn racks' cap), with the counts of what it leaves out and of what matched nothing."""
    racks, more_racks = ordered(measured.racks, limit, frozenset(i.rack for i in measured.inlets_over))
    feeds, more_feeds = ordered(measured.feeds, limit)
    return {"m": measured, "racks": racks, "more_racks": more_racks, "feeds": feeds, "more_feeds": more_feeds,
            "more_racks_over": len(measured.racks_over) - sum(d.over for d in racks),
            "more_feeds_over": len(measured.feeds_over) - sum(d.over for d in feeds),
            "files": ", ".join(report_path(f) for f in measured.files), "shown": _shown_share,
            "bar": lambda d: _bar(Bar(d.name, d.measured_kw, d.budget_kw)), "next": measured.next_steps()}


def _shown_share(share: float) -> str:
    return "no budget" if share == float("inf") else f"{share:.0%}"


class StorageCard(Protocol):
    """What the report asks of a target that provides a managed file system (its `report.py`'s `storage_card`):
    the card's `title`, `facts` ((label, value) lines) and `svg`; None when the blueprint has none of it."""

    def __call__(self, cluster: Cluster) -> dict[str, Any] | None:
        ...


class CloudPools(Protocol):
    """What the report asks of a cloud target (its `report.py`'s `cloud_pools`): rows of its cloud table (pool,
    hardware, count, GPUs, network, and for each pool's drawing its instances' GPUs (`gpus_each`) and fabric
    interfaces (`interfaces`), placement, zone and capacity)."""

    def __call__(self, cluster: Cluster, catalog: Catalog) -> list[dict[str, Any]]:
        ...


def _storage(cluster: Cluster) -> dict[str, Any] | None:
    """The card of the managed file system a target in use provides (its `report.py`'s `storage_card`), if any."""
    for target in in_use(cluster):
        card_of: StorageCard | None = stage_function(target, "report", "storage_card")
        if card_of is not None and (card := card_of(cluster)) is not None:
            return card
    return None


def _cloud_pools(cluster: Cluster, loaded: Loaded) -> list[dict[str, Any]]:
    """Every cloud pool, of whichever target runs it (the `cloud_pools` of each target in use's `report.py`: a
    hybrid's burst pool is its cloud target's), with its blueprint counts: a power-saved pool is drawn up to its
    max_count."""
    pools = {pool.name: pool for pool in cluster.pools}
    rows = []
    for target in in_use(cluster):
        rows_of: CloudPools | None = stage_function(target, "report", "cloud_pools")
        for row in rows_of(cluster, loaded.catalog) if rows_of is not None else ():
            pool = pools.get(str(row.get("name")))
            if pool is None:  # a row of the target's own making: drawn as it gives it
                rows.append(row)
            elif pool_target(cluster, pool) is target:
                rows.append({**row, "count": pool.count, "max_count": pool.max_count})
    return rows


def _switch_note(plan: Plan, switch: str) -> dict[str, str] | None:
    """What the elevations say about the fabric's switches: how many are drawn, and how many fit in no rack."""
    racked = plan.switches
    if racked is None:
        return None
    placed = sum(racked.placed.values())
    where = "the site's network racks" if racked.where == "network" else "the room the pools leave"
    note = {"racked": f"{counted(placed, f'{switch} switch', f'{switch} switches')} racked in {where}"}
    if racked.unplaced:
        homeless = sum(racked.unplaced.values())
        tiers = ", ".join(f"{count:,} {tier}" for tier, count in racked.unplaced.items())
        note["unplaced"] = (f"{tiers} {agree(homeless, 'switch', 'switches')} {agree(homeless, 'fits', 'fit')} "
                            f"in no rack")
    return note


def _fabric_note(fabric: Any, switch: str) -> str:
    split = f" ({fabric.split_note})" if fabric.split else ""
    return (f"{fabric.tiers}-tier fat tree of {fabric.radix}-port {switch} switches{split} at "
            f"{fabric.ratio_note}; carries up to {fabric.capacity:,} endpoints.")


def _bom(loaded: Loaded, plan: Plan, switch: str, switch_kw: float) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for pool in loaded.cluster.pools:
        entry = loaded.catalog.get(pool.hardware)
        kw = f"{entry.max_power_kw:g}" if isinstance(entry, Server) else ""
        items.append({"item": f"pool {pool.name}", "what": entry.description, "count": pool.count, "kw": kw})
    fabric = plan.fabric
    if fabric:
        for tier, count in (("leaf switches", fabric.leaves), ("spine switches", fabric.spines),
                            ("core switches", fabric.cores)):
            if count:
                items.append({"item": tier, "what": switch, "count": count, "kw": f"{switch_kw:g}"})
        for name, count in fabric.cables.items():
            items.append({"item": "cables", "what": name, "count": count, "kw": ""})
    site = loaded.cluster.site
    if site is not None:
        items.append({"item": "racks", "what": f"{len(site.rows)} rows", "count": len(plan.loads), "kw": ""})
        feeds = sum(len(r.feeds) for _, _, _, r in site.racks())
        items.append({"item": "power feeds", "what": "A and B sides", "count": feeds, "kw": ""})
    return items
