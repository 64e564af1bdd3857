"""Rack density rules: U space and positions, weight, floor loading, depth, airflow, contracted kW, and room for the
fabric's switches."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from clusterforge.catalog import Switch
from clusterforge.physics.budget import exceeds
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context, rack_ref
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import HELD, PLACED, RACK, Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("rack", "Rack density", 20)


@rule("RCK-001", "error", DOMAIN, "U space", "NetBox rack validation (height and overlap)", needs_site=True,
      inputs=Inputs((f"{RACK}.{{u_height,reserved_u}}", f"{RACK}.devices[].{{pool,count,position}}"),
             ("u_height",)))
def u_space(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Σ device U + reserved U ≤ rack U height; explicitly positioned devices fit the rack and do not overlap."""
    for load, rack in ctx.racks():
        used = load.u_used + rack.reserved_u
        if exceeds(used, rack.u_height, "U"):
            yield Draft(load.rack.path, f"rack {rack.name} needs {used}U ({load.u_used}U of devices + "
                        f"{rack.reserved_u}U reserved) but is {rack.u_height}U high",
                        "move devices to another rack", used, rack.u_height, "U", where=rack_ref(load))
            continue
        spans: list[tuple[int, int, str, object]] = []
        for placed, server in load.servers:
            if placed.position is None:
                continue
            top = placed.position + placed.count * server.u_height - 1
            spans.append((placed.position, top, placed.pool, placed.path))
            if top > rack.u_height:
                yield Draft(placed.path or load.rack.path,
                            f"{placed.count}× {placed.pool} from U{placed.position} reach U{top}, above the "
                            f"{rack.u_height}U rack {rack.name}", "lower the position", top, rack.u_height, "U",
                            where=rack_ref(load))
        spans.sort(key=lambda s: s[0])
        for (lo1, hi1, pool1, _), (lo2, hi2, pool2, path2) in pairwise(spans):
            if lo2 <= hi1:
                yield Draft(path2 if isinstance(path2, tuple) else load.rack.path,
                            f"in rack {rack.name}, {pool2} at U{lo2}-U{hi2} overlaps {pool1} at U{lo1}-U{hi1}",
                            "change one position", where=rack_ref(load))


@rule("RCK-002", "error", DOMAIN, "Static weight", "UL 2416 static load ratings (1,361 kg common)", needs_site=True,
      inputs=Inputs((f"{RACK}.{{max_weight_kg,tare_weight_kg}}", *HELD), ("weight_kg",)))
def static_weight(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Tare weight + Σ device weight ≤ the rack's max_weight_kg."""
    for load, rack in ctx.racks():
        total = rack.tare_weight_kg + load.weight_kg
        if exceeds(total, rack.max_weight_kg, "kg"):
            yield Draft((*load.rack.path, "max_weight_kg"),
                        f"rack {rack.name} weighs {total:.0f} kg ({rack.tare_weight_kg:g} kg tare + "
                        f"{load.weight_kg:.0f} kg devices); its rating is {rack.max_weight_kg:g} kg",
                        "move a server or use a rack rated for more", total, rack.max_weight_kg, "kg",
                        where=rack_ref(load))


@rule("RCK-003", "error", DOMAIN, "Floor loading", "facility specification (floor_load_kg_per_m2)",
      needs_site=True,
      inputs=Inputs(("site.floor_load_kg_per_m2", f"{RACK}.{{footprint_m2,tare_weight_kg}}", *HELD),
             ("weight_kg",)))
def floor_loading(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Rack weight / footprint ≤ the site's floor_load_kg_per_m2."""
    limit = ctx.site.floor_load_kg_per_m2
    if limit is None:
        return
    for load, rack in ctx.racks():
        total = rack.tare_weight_kg + load.weight_kg
        pressure = total / rack.footprint_m2
        if load.device_count and exceeds(total, limit * rack.footprint_m2, "kg"):  # in kg: to the gram
            yield Draft((*load.rack.path, "footprint_m2"),
                        f"rack {rack.name} puts {pressure:.0f} kg/m² on the floor ({total:.0f} kg over "
                        f"{rack.footprint_m2:g} m²); the floor takes {limit:g} kg/m²",
                        "spread the load (spreader plates, a larger footprint) or lighten the rack", pressure, limit,
                        "kg/m²", where=rack_ref(load))


@rule("RCK-004", "error", DOMAIN, "Mounting depth", "NVIDIA DGX B200 user guide (897 mm chassis depth)",
      needs_site=True,
      inputs=Inputs((f"{RACK}.mounting_depth_mm", *HELD), ("depth_mm",)))
def mounting_depth(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every device is no deeper than the rack's mounting depth (when the rack states one)."""
    for load, rack in ctx.racks():
        if rack.mounting_depth_mm is None:
            continue
        for placed, server in load.servers:
            if server.depth_mm > rack.mounting_depth_mm:
                yield Draft(placed.path or load.rack.path,
                            f"{placed.pool} ({server.depth_mm} mm deep) does not fit rack {rack.name}'s "
                            f"{rack.mounting_depth_mm} mm mounting depth", "use a deeper rack",
                            server.depth_mm, rack.mounting_depth_mm, "mm", where=rack_ref(load))


@rule("RCK-005", "error", DOMAIN, "Airflow direction", "NetBox airflow fields", needs_site=True,
      inputs=Inputs((f"{RACK}.airflow", *HELD), ("airflow",)))
def airflow_direction(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every device breathes the same way as its rack (front-to-rear into the hot aisle)."""
    for load, rack in ctx.racks():
        for placed, server in load.servers:
            if server.airflow != rack.airflow:
                yield Draft(placed.path or load.rack.path,
                            f"{placed.pool} blows {server.airflow} but rack {rack.name} is {rack.airflow}",
                            "turn the device around or order the other airflow variant", where=rack_ref(load))


@rule("RCK-006", "warning", DOMAIN, "Density contract", "colocation contracts (kW per rack)", needs_site=True,
      inputs=Inputs((f"{RACK}.contracted_kw", "site.contracted_kw_per_rack", *PLACED), ("max_power_kw",)))
def density_contract(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Rack kW ≤ the contracted kW per rack (rack.contracted_kw, else site.contracted_kw_per_rack)."""
    for load, rack in ctx.racks():
        limit = rack.contracted_kw or ctx.site.contracted_kw_per_rack
        if limit is not None and exceeds(load.power_kw, limit, "kW"):
            yield Draft(load.rack.path, f"rack {rack.name} draws {load.power_kw:.1f} kW; the contract allows "
                        f"{limit:g} kW per rack", "renegotiate density or spread the load", load.power_kw, limit,
                        "kW", where=rack_ref(load))


@rule("RCK-007", "warning", DOMAIN, "Fabric switches have rack room",
      "NVIDIA DGX SuperPOD reference architecture (leaf, spine and core switches stand in racks of their own); "
      "NetBox rack validation", needs_site=True,
      inputs=Inputs(("fabric.{tiers,oversubscription}", f"{RACK}.{{u_height,reserved_u,airflow,mounting_depth_mm}}",
                     *HELD),
                    ("u_height", "max_power_kw", "weight_kg", "depth_mm", "airflow"), ("electrical", "cooling"),
                    also="the catalog figures are the fabric switch's as well as the pools' hardware's"))
def switch_room(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every switch of the fat tree has a rack: one marked `role: network`, or the room the pools leave when none is.

    A warning by default, not an error: a site file may describe only the compute racks while the network
    stands in a row it leaves out. Where the site file is the whole room, set `level: error` in the policy config.
    """
    for racked in ctx.plan.fabrics:  # one per blueprint; one per team of a shared site
        if not racked.placement.unplaced:
            continue
        unplaced = sum(racked.placement.unplaced.values())
        tiers = ", ".join(f"{count:,} {tier}" for tier, count in racked.placement.unplaced.items())
        where = ("the racks marked role: network" if racked.placement.where == "network"
                 else "the site (no rack is marked role: network, so the room the pools leave was used)")
        switch = ctx.catalog.get(racked.switch)
        each = (f" (each {switch.u_height}U, {switch.max_power_kw:g} kW, {switch.weight_kg:g} kg)"
                if isinstance(switch, Switch) else "")
        yield Draft(racked.path, f"{unplaced:,} of the fabric's {racked.tree.switches:,} {racked.switch} switches "
                    f"({tiers}) fit in no rack of {where}{each}",
                    "add racks with `role: network` (or room in them: U, A/B feeds, weight, cooling) for the switches",
                    unplaced, 0, "switches")


@rule("RCK-008", "error", DOMAIN, "Every node has a rack",
      "NetBox rack validation (a device stands in a rack); the planner's rack packing (U, A/B kW, kg, floor, cooling)",
      needs_site=True,
      inputs=Inputs(("pools[].{hardware,count}", f"{RACK}.devices[].{{pool,count}}", "placement[].{rack,pool,count}",
                     f"{RACK}.{{u_height,reserved_u,max_weight_kg,tare_weight_kg,footprint_m2,feeds,cooling}}"),
                    ("u_height", "max_power_kw", "weight_kg", "depth_mm", "airflow"), ("electrical", "cooling"),
                    also="the nodes the blueprint leaves unplaced are placed by the planner"))
def nodes_have_racks(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every node of every pool stands in a rack of the site: the planner found room for all it had to place.

    An error, like `plan`'s own refusal: a design whose nodes stand nowhere cannot be built, and every command
    (check, render, report, plan, the stack and the CrossGuard pack) must say so.
    """
    index = {pool.name: i for i, pool in enumerate(ctx.cluster.pools)}
    for pool, count in ctx.plan.unplaced.items():
        if count <= 0:
            continue
        total = ctx.cluster.pools[index[pool]].ceiling if pool in index else count
        yield Draft(("pools", index[pool], "count") if pool in index else ("site",),
                    f"{count:,} node(s) of pool {pool} fit in no rack ({total - count:,} of {total:,} placed): "
                    "the site has no room left for them (U, A/B feeds, weight, floor or cooling)",
                    "add racks or feeds, place them by hand (devices or placement), or lower the count",
                    count, 0, "nodes")
