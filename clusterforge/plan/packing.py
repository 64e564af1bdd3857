"""Rack packing: the blueprint's explicit placements, then first-fit decreasing for the pools it left out.

Packing works on counts: for each pool (largest first) and each rack (blueprint order) it computes how many
devices still fit from the rack's free U, kW (A/B), kg, air and liquid heat and the shared budgets (row
cooling N+1, panels), and places that many at once. That is pools × racks steps, never nodes × racks.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, replace

from clusterforge.catalog import Catalog, Server
from clusterforge.model import Cluster, Pool, Rack, Row, Site
from clusterforge.physics import Assumptions
from clusterforge.physics.electrical import derated_kw
from clusterforge.plan.capacity import (
    Demand,
    device_demand,
    n_plus_one_kw,
    own_cdus,
    panel_shares,
    room_heat_kw,
    suits,
)
from clusterforge.plan.elevation import free_runs
from clusterforge.plan.model import PlacedDevices, PlacementReport, RackLimits, RackLoad, RackPlan
from clusterforge.target_kernel import pool_target

_EPS = 1e-9
_DIMENSIONS = ("u", "kw", "kg", "air_kw", "liquid_kw")  # U first: it is packed by gaps, the rest by amount
Item = tuple[Pool, Server, Demand]  # a pool to place, its hardware, and what one device of it takes


def explicit_racks(cluster: Cluster) -> tuple[RackPlan, ...]:
    """Every rack of the site with the devices the blueprint placed in it."""
    if cluster.site is None:
        return ()
    racks = []
    for ri, ki, row, rack in cluster.site.racks():
        devices = tuple(
            PlacedDevices(d.pool, d.count, d.position, ("site", "rows", ri, "racks", ki, "devices", di))
            for di, d in enumerate(rack.devices)
        )
        racks.append(RackPlan(ri, ki, row.name, rack.name, devices))
    return tuple(racks)


def racked_pools(cluster: Cluster) -> list[Pool]:
    """The pools whose nodes stand in the facility: those of a facility target (a cloud pool of an on-prem
    cluster has no rack)."""
    return [p for p in cluster.pools if pool_target(cluster, p).facility]


def pools_to_place(cluster: Cluster) -> list[Pool]:
    """Racked pools with no explicit placement (storage pools are not racked by the planner)."""
    placed = {d.pool for _, _, _, rack in (cluster.site.racks() if cluster.site else []) for d in rack.devices}
    return [p for p in racked_pools(cluster) if p.name not in placed and p.role != "storage"]


@dataclass
class Room:
    """Free capacity of one rack while packing: `gaps` are its free stretches of U (lowest first), `free` the
    other dimensions, `draws` the (budget, demand field, share) of the shared budgets it draws from."""

    gaps: list[int]
    free: dict[str, float]
    empty: bool
    draws: list[tuple[str, str, float]]


def shared_budgets(site: Site, loads: tuple[RackLoad, ...], assumptions: Assumptions,
                   rows: Collection[int] | None = None) -> dict[str, float]:
    """What is left of each budget racks share: row CRAHs (N+1, when listed), row CDUs (N+1; none listed
    means no liquid heat; racks with CDUs of their own draw nothing from them) and panels (derated), after the
    blueprint's own placements. `rows`: only those rows' budgets (and every panel), for a caller that needs a
    few rows of a large hall."""
    budgets: dict[str, float] = {}
    for ri, row in enumerate(site.rows):
        if rows is not None and ri not in rows:
            continue
        if row.cooling.crah_kw:
            budgets[f"row {row.name} air_kw"] = n_plus_one_kw(row.cooling.crah_kw)
        budgets[f"row {row.name} liquid_kw"] = n_plus_one_kw(row.cooling.cdu_kw)
    for panel in site.panels:
        budgets[f"panel {panel.name}"] = derated_kw(panel, assumptions.electrical)
    for (ri, _, row, rack), load in zip(site.racks(), loads, strict=True):
        if rows is None or ri in rows:
            if f"row {row.name} air_kw" in budgets:
                budgets[f"row {row.name} air_kw"] -= room_heat_kw(load.air_heat_kw, rack)
            if not own_cdus(rack):
                budgets[f"row {row.name} liquid_kw"] -= load.liquid_heat_kw
        if site.panels:
            for key, _, share in _panel_draws(rack):
                budgets[key] -= load.power_kw * share
    return budgets


def _panel_draws(rack: Rack) -> list[tuple[str, str, float]]:
    return [(f"panel {name}", "kw", share) for name, share in panel_shares(rack).items()]


def _capacity(limit: RackLimits) -> dict[str, float]:
    """An empty rack's room per dimension (weight without the rack's own tare)."""
    return {"u": limit.u, "kw": limit.kw, "kg": limit.kg - limit.tare_kg, "air_kw": limit.air_kw,
            "liquid_kw": limit.liquid_kw}


def free_room(limit: RackLimits, load: RackLoad) -> dict[str, float]:
    """What a rack's limits leave after its load, per dimension but U (kW, kg without the tare, air and liquid)."""
    used = {"kw": load.power_kw, "kg": load.weight_kg, "air_kw": load.air_heat_kw, "liquid_kw": load.liquid_heat_kw}
    return {dim: room - used[dim] for dim, room in _capacity(limit).items() if dim != "u"}


def open_room(row: Row, rack: Rack, plan: RackPlan, load: RackLoad, limit: RackLimits, budgets: dict[str, float],
              heights: dict[str, int]) -> Room:
    """One rack's room: what its limits leave after its load, its free U and the shared budgets it draws from
    (`budgets` must hold its row's)."""
    free = free_room(limit, load)
    gaps = free_runs(plan, heights, rack.u_height, rack.reserved_u)
    draws = [] if own_cdus(rack) else [(f"row {row.name} liquid_kw", "liquid_kw", 1.0)]
    draws += _panel_draws(rack)
    if f"row {row.name} air_kw" in budgets and rack.cooling.kind != "rdhx":  # a door keeps it from the room
        draws.append((f"row {row.name} air_kw", "air_kw", 1.0))
    return Room(gaps, free, load.device_count == 0, draws)


def open_rooms(site: Site, racks: tuple[RackPlan, ...], loads: tuple[RackLoad, ...], limits: tuple[RackLimits, ...],
               budgets: dict[str, float], heights: dict[str, int]) -> list[Room]:
    return [open_room(row, rack, plan, load, limit, budgets, heights)
            for (_, _, row, rack), plan, load, limit in zip(site.racks(), racks, loads, limits, strict=True)]


def fit(demand: Demand, gaps: list[int], free: dict[str, float], draws: list[tuple[str, str, float]],
        budgets: dict[str, float]) -> int:
    """How many devices of `demand` fit in the gaps, `free` and the shared budgets (0 when any is exceeded)."""
    ratios = [free[dim] / need for dim in _DIMENSIONS[1:] if (need := getattr(demand, dim)) > 0]
    ratios += [budgets[key] / need for key, dim, share in draws if (need := getattr(demand, dim) * share) > 0]
    count = sum(gap // demand.u for gap in gaps)
    return min(count, max(0, math.floor(min(ratios) + _EPS))) if ratios else count


def take(demand: Demand, count: int, room: Room, budgets: dict[str, float], from_top: bool = False) -> None:
    """Book `count` devices: U from the lowest gaps first, as the elevation stacks devices (from the highest with
    `from_top`, as it stacks the fabric's switches), the rest by amount."""
    left = count
    order = range(len(room.gaps) - 1, -1, -1) if from_top else range(len(room.gaps))
    for i in order:
        used = min(left, room.gaps[i] // demand.u)
        room.gaps[i] -= used * demand.u
        left -= used
    for dim in _DIMENSIONS[1:]:
        room.free[dim] -= getattr(demand, dim) * count
    for key, dim, share in room.draws:
        budgets[key] -= getattr(demand, dim) * share * count
    room.empty = False


def _empty_fit(demand: Demand, server: Server, limit: RackLimits) -> int:
    """Devices an empty rack of these limits holds, ignoring shared budgets (for the lower bound)."""
    capacity = _capacity(limit)
    count = fit(demand, [int(capacity["u"])], capacity, [], {})
    return min(count, 1) if server.form == "rack" else count


def lower_bound(items: list[Item], racks: list[Rack],
                limits: tuple[RackLimits, ...]) -> tuple[int | None, dict[str, int | None]]:
    """Fewest racks the items could need: per limit ⌈Σ demand / best rack⌉, per pool ⌈count / best fit⌉ (racks
    kept for the network take no pool, so they are not the best rack)."""
    bounds: dict[str, int | None] = {}
    pool_racks = [limit for rack, limit in zip(racks, limits, strict=True) if rack.role != "network"]
    for dim in _DIMENSIONS:
        need = sum(pool.ceiling * getattr(demand, dim) for pool, _, demand in items)
        if need <= 0:
            continue
        best = max((_capacity(limit)[dim] for limit in pool_racks), default=0.0)
        bounds[dim] = math.ceil(need / best - _EPS) if best > 0 else None
    for pool, server, demand in items:
        fits = [_empty_fit(demand, server, limit) for rack, limit in zip(racks, limits, strict=True)
                if suits(server, rack, limit)]
        best_fit = max(fits, default=0)
        bounds[f"pool {pool.name}"] = math.ceil(pool.ceiling / best_fit) if best_fit else None
    rack_scale = sum(pool.ceiling for pool, server, _ in items if server.form == "rack")
    if rack_scale:
        bounds["rack-scale systems"] = rack_scale
    values = list(bounds.values())
    if any(v is None for v in values):
        return None, bounds
    return max((v for v in values if v is not None), default=0), bounds


def _order(items: list[Item], limits: tuple[RackLimits, ...]) -> list[Item]:
    """First-fit decreasing: rack-scale systems first, then by the largest share of the best rack taken."""
    best = {dim: max((_capacity(limit)[dim] for limit in limits), default=0.0) for dim in _DIMENSIONS}

    def size(item: Item) -> tuple[bool, float]:
        _, server, demand = item
        shares = [getattr(demand, dim) / best[dim] for dim in _DIMENSIONS if best[dim] > 0]
        return server.form == "rack", max(shares, default=0.0)

    return sorted(items, key=size, reverse=True)


def auto_place(cluster: Cluster, catalog: Catalog, racks: tuple[RackPlan, ...], loads: tuple[RackLoad, ...],
               limits: tuple[RackLimits, ...], heights: dict[str, int], assumptions: Assumptions,
               ) -> tuple[tuple[RackPlan, ...], dict[str, int], PlacementReport]:
    """Place every pool without explicit placements on top of what the blueprint placed.

    `heights` is the U of each pool's hardware. Returns the racks with the planner's devices appended, the
    nodes per pool that fit nowhere, and a report with the lower bound on racks those pools need.
    """
    site = cluster.site
    assert site is not None
    items = [(pool, server := catalog.of(pool.hardware, Server), device_demand(pool, server))
             for pool in pools_to_place(cluster)]
    if not items:  # everything is placed by hand: nothing to pack
        return racks, {}, PlacementReport({}, 0, 0, {})
    site_racks = [rack for _, _, _, rack in site.racks()]
    bound, bounds = lower_bound(items, site_racks, limits)
    budgets = shared_budgets(site, loads, assumptions)
    rooms = open_rooms(site, racks, loads, limits, budgets, heights)
    added: list[list[PlacedDevices]] = [[] for _ in racks]
    unplaced: dict[str, int] = {}
    auto_placed: dict[str, int] = {}
    for pool, server, demand in _order(items, limits):
        left = pool.ceiling
        for index, (rack, limit, room) in enumerate(zip(site_racks, limits, rooms, strict=True)):
            if left == 0:
                break
            if not suits(server, rack, limit) or (server.form == "rack" and not room.empty):
                continue
            count = min(left, fit(demand, room.gaps, room.free, room.draws, budgets))
            if server.form == "rack":
                count = min(count, 1)
            if count:
                take(demand, count, room, budgets)
                added[index].append(PlacedDevices(pool.name, count))
                left -= count
        auto_placed[pool.name] = pool.ceiling - left
        if left:
            unplaced[pool.name] = left
    placed_racks = tuple(replace(rack, devices=rack.devices + tuple(extra)) if extra else rack
                         for rack, extra in zip(racks, added, strict=True))
    report = PlacementReport(auto_placed, sum(1 for extra in added if extra), bound, bounds)
    return placed_racks, unplaced, report
