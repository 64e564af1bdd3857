"""`plan` as text: rich tables of racks, placement, the fabric bill of materials and the nodes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clusterforge.cli import terminal
from clusterforge.model import Cluster
from clusterforge.plan.bom import fabric_bom
from clusterforge.plan.model import FatTree, Plan
from clusterforge.target_kernel import target_of

if TYPE_CHECKING:
    from rich.console import Console


def number(value: float) -> str:
    """`1,080`, `34.5`: thousands separated, one decimal only where there is a fraction."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def used_of(used: float, limit: float) -> str:
    """`30.6/34.5 (89 %)`: the share is what people scan for."""
    share = f" ({used / limit:.0%})".replace("%", " %") if limit > 0 else ""
    return f"{number(used)}/{number(limit)}{share}"


def racks_table(plan: Plan, console: Console) -> None:
    from rich.table import Table

    table = Table(title="racks", title_justify="left")
    for column in ("rack", "row", "devices", "U", "kW (A/B)", "kg", "air kW", "liquid kW"):
        table.add_column(column, justify="left" if column in ("rack", "row", "devices") else "right", overflow="fold")
    for load, limit in zip(plan.loads, plan.limits, strict=True):
        devices = ", ".join([*(f"{d.pool} ×{d.count}" + ("" if d.explicit else " (auto)") for d in load.rack.devices),
                             *(f"{s.tier} ×{s.count} ({s.switch})" for s in load.rack.switches)])
        liquid = used_of(load.liquid_heat_kw, limit.liquid_kw) if limit.liquid else "-"
        table.add_row(load.rack.name, load.rack.row, devices or "-", used_of(load.u_used, limit.u),
                      used_of(load.power_kw, limit.kw), used_of(load.weight_kg + limit.tare_kg, limit.kg),
                      used_of(load.air_heat_kw, limit.air_kw), liquid)
    terminal.print_table(console, table, prose=0)  # figures: a rack per row reads better than a block per rack


def placement_lines(plan: Plan, console: Console) -> None:
    report = plan.placement
    if report is None or not report.auto_placed:
        return
    placed = ", ".join(f"{pool} {count}" for pool, count in report.auto_placed.items())
    console.print(f"auto-placed: {placed} node(s) into {report.racks_used} rack(s)")
    bounds = ", ".join(f"{name} {'none fits' if value is None else value}" for name, value in report.bounds.items())
    bound = "no rack can hold every pool" if report.lower_bound is None else f"{report.lower_bound} rack(s)"
    console.print(f"lower bound: {bound} ({bounds})")


def switch_lines(plan: Plan, console: Console) -> None:
    """Where the fabric's switches were racked, and those that fit in no rack (RCK-007 warns about them)."""
    racked = plan.switches
    if racked is None:
        return
    unplaced = racked.unplaced
    placed = ", ".join(f"{tier} {count:,}" + (f" of {count + unplaced[tier]:,}" if tier in unplaced else "")
                       for tier, count in racked.placed.items())
    where = ("the site's network racks" if racked.where == "network"
             else "room the pools leave (the site marks no rack `role: network`)")
    console.print(f"switches racked: {placed} into {racked.racks_used:,} rack(s), {where}")
    if unplaced:
        console.print("[red]unplaced switches[/red]: " + ", ".join(
            f"{tier} {count:,}" for tier, count in unplaced.items()) + " fit in no rack (RCK-007)")


def fabric_table(fabric: FatTree, console: Console) -> None:
    from rich.table import Table

    console.print(f"fabric: {fabric.tiers} tier(s), {fabric.endpoints:,} endpoints on radix-{fabric.radix} "
                  f"switches (capacity {fabric.capacity:,}), oversubscription {fabric.ratio_note}")
    if fabric.split:
        console.print(f"ports: {fabric.split_note}")
    ratios = {tier: f"{down} down / {up} up ({ratio:g}:1)" for tier, ratio, down, up in fabric.ratios}
    table = Table()
    for column in ("tier", "switches", "ports used", "cables from below", "ports per switch"):
        table.add_column(column, justify="left" if column in ("tier", "ports per switch") else "right", overflow="fold")
    for tier in fabric_bom(fabric):
        below = "node" if tier.tier == "leaf" else {"spine": "leaf", "core": "spine"}[tier.tier]
        table.add_row(tier.tier, f"{tier.switches:,}", used_of(tier.ports_used, tier.ports_total),
                      f"{tier.cables_down:,} ({below}-{tier.tier})", ratios.get(tier.tier, "-"))
    table.add_row("total", f"{fabric.switches:,}", "", f"{sum(fabric.cables.values()):,}", "")
    terminal.print_table(console, table, prose=0)


def nodes_table(plan: Plan, console: Console) -> None:
    from rich.table import Table

    table = Table(title="nodes", title_justify="left")
    for column in ("pool", "role", "hardware", "nodes", "hostlist", "GPUs/node", "racks", "unplaced", "network"):
        table.add_column(column, overflow="fold")
    for pool in plan.nodes:
        racks = sorted({run.rack for run in pool.runs if run.rack})
        network = pool.network or (f"{pool.fabric_nics} rails" if pool.fabric_nics else "-")
        gpus = f"{pool.gpu_count}× {pool.gpu_model}" if pool.gpu_model else "-"
        table.add_row(pool.pool, pool.role, pool.hardware, f"{pool.count:,}", pool.hostlist, gpus,
                      str(len(racks)) if racks else "-", str(plan.unplaced.get(pool.pool, "")) or "-", network)
    terminal.print_table(console, table)
    if plan.slurm is not None:
        console.print(f"slurm controller: {plan.slurm.controller or '-'} ({plan.slurm.controller_reason})")
        for part in plan.slurm.partitions:
            console.print(f"partition {part.name}{' (default)' if part.default else ''}: {part.nodes or '-'}")
        if plan.slurm.blocks:
            console.print(f"slurm topology: topology/block, {len(plan.slurm.blocks)} {plan.domain_title()}(s) as "
                          "blocks "
                          f"({plan.slurm.blocks[0].name}: {plan.slurm.blocks[0].nodes}, ...), "
                          f"BlockSizes={','.join(map(str, plan.slurm.block_sizes))}")


def show(cluster: Cluster, plan: Plan) -> None:
    console = terminal.console()
    nodes = sum(p.count for p in plan.nodes)  # the plan's nodes: an NVL72 rack is 18 (its trays)
    racks = f", {len(plan.racks)} racks" if plan.racks else ""
    if cluster.site is None and target_of(cluster).facility:
        racks = ", no site (design only)"
    console.print(f"[bold]{cluster.name}[/bold] (target {cluster.target}): {nodes:,} nodes in "
                  f"{len(cluster.pools)} pool(s){racks}")
    if plan.racks:
        racks_table(plan, console)
        placement_lines(plan, console)
    if plan.unplaced:
        console.print("[red]unplaced[/red]: " + ", ".join(f"{p} {n}" for p, n in plan.unplaced.items())
                      + " node(s) fit in no rack")
    if plan.fabric is not None:
        fabric_table(plan.fabric, console)
        switch_lines(plan, console)
    nodes_table(plan, console)
