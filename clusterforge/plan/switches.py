"""Racking the fabric: the fat tree's leaves, spines and cores stand in racks like any device, so the rack rules
(U, A/B power, weight, floor, cooling, the row's CRAHs and the panels) see their U, kW, kg and heat.

Where they go:
- the racks the site marks `role: network`, filled in blueprint order (dense, as network racks are). The site
  has said where the network stands, so no switch goes elsewhere: what does not fit there is reported
  (RCK-007) rather than spread over compute racks behind the operator's back;
- otherwise the room the pools leave, levelled: the racks with the most room give first, down to a common level
  of room left (water-filling), so an empty rack takes them all when it can (it becomes a network rack, as in
  the DGX SuperPOD layouts), and otherwise they spread over the compute racks instead of topping one up to its
  feed or cooling limit — which keeps racks clear of the rules' headroom warnings (PWR-002 at 90 %, CLG-001 at
  80 %) where the room allows.
A rack that holds a rack-scale system (an NVL72) takes none: the system is the rack. Within a rack they fill
the free U from just below the reserved U downwards (top of rack), after the pools' devices, so no node moves
because of them (plan/elevation.py `switch_positions` draws them there).

Like pool packing (plan/packing.py) this works on counts: how many switches a rack can take by its own room
(free U, kW (A/B), kg, air heat) is worked out once per kind of rack, the share of each rack follows from
those counts (a binary search for the level), and each rack with a share books it at once against the shared
budgets (row CRAHs and CDUs N+1, panels) of the rows that take switches — racks × log steps, never switches ×
racks. Shared budgets can turn part of a share away; a second pass, most power to spare first, places what it
can of that.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from clusterforge.catalog import Switch
from clusterforge.model import Rack, Site
from clusterforge.physics import Assumptions
from clusterforge.plan.capacity import Demand
from clusterforge.plan.elevation import free_runs
from clusterforge.plan.model import FatTree, PlacedSwitches, RackLimits, RackLoad, RackPlan, SwitchPlacement
from clusterforge.plan.packing import Room, fit, free_room, open_room, shared_budgets, take

NETWORK_RACKS = "network"  # the site marks racks `role: network`: only those
COMPUTE_RACKS = "compute"  # it marks none: the room the pools leave


def switch_demand(switch: Switch) -> Demand:
    """What one switch takes from a rack: its U, nameplate kW and kg; an air-cooled switch sends all its heat to
    air (no catalog switch is liquid-cooled)."""
    return Demand(switch.u_height, switch.max_power_kw, switch.weight_kg, switch.max_power_kw, 0.0)


def switch_suits(switch: Switch, rack: Rack) -> bool:
    """Whether the switch may stand in this rack at all: the same airflow (RCK-005) and mounting depth (RCK-004)
    that servers must meet."""
    if switch.airflow != rack.airflow:
        return False
    return rack.mounting_depth_mm is None or switch.depth_mm <= rack.mounting_depth_mm


def tiers(fabric: FatTree) -> list[tuple[str, int]]:
    """The switches to rack per tier, leaves first (they are cabled to the nodes, so they get the first room)."""
    return [(tier, count) for tier, count in (("leaf", fabric.leaves), ("spine", fabric.spines),
                                              ("core", fabric.cores)) if count]


def _order(site_racks: list[Rack], racks: tuple[RackPlan, ...], switch: Switch,
           whole_racks: Collection[str]) -> tuple[str, list[int]]:
    """The racks that may take switches, in blueprint order, and which kind they are (see the module docstring)."""
    network = [i for i, rack in enumerate(site_racks) if rack.role == "network"]
    where, order = (NETWORK_RACKS, network) if network else (COMPUTE_RACKS, range(len(site_racks)))
    return where, [i for i in order if switch_suits(switch, site_racks[i])
                   and not (whole_racks and any(d.pool in whole_racks for d in racks[i].devices))]


def first_fit(fits: list[int], count: int) -> list[int]:
    """Shares of `count` over racks that take up to `fits` each, filling them in order."""
    shares = []
    for room in fits:
        shares.append(min(room, count))
        count -= shares[-1]
    return shares


def level(fits: list[int], count: int) -> list[int]:
    """Shares of `count` over racks that take up to `fits` each, so that the room the racks keep is as even as
    it can be: the racks with the most room give down to a common level L, the highest at which
    Σ max(0, fit − L) still covers `count`; of those, the last in order give one less, to take exactly `count`.
    Everything, when the racks cannot take `count`."""
    if count >= sum(fits):
        return list(fits)
    low, high = 0, max(fits, default=0)
    while low < high:  # the highest level that still covers count
        mid = (low + high + 1) // 2
        if sum(max(0, room - mid) for room in fits) >= count:
            low = mid
        else:
            high = mid - 1
    shares = [max(0, room - low) for room in fits]
    surplus = sum(shares) - count  # fewer than the racks above the level: one back from each of the last ones
    for i in range(len(shares) - 1, -1, -1):
        if surplus == 0:
            break
        if shares[i]:
            shares[i] -= 1
            surplus -= 1
    return shares


def _own_fits(order: list[int], site_racks: list[Rack], racks: tuple[RackPlan, ...], loads: tuple[RackLoad, ...],
              limits: tuple[RackLimits, ...], heights: dict[str, int], demand: Demand) -> list[int]:
    """Switches each rack of `order` takes by its own room (free U, kW, kg, air), before shared budgets: worked
    out once per kind of rack — its limits (one object per kind, plan/capacity.py `site_limits`), height and
    devices — since a hall repeats a few kinds thousands of times."""
    known: dict[tuple[object, ...], int] = {}
    out = []
    for i in order:
        rack, plan, limit = site_racks[i], racks[i], limits[i]
        kind = (id(limit), rack.u_height, rack.reserved_u, tuple([(d.pool, d.count, d.position) for d in plan.devices]),
                plan.switches)
        count = known.get(kind)
        if count is None:
            gaps = free_runs(plan, heights, rack.u_height, rack.reserved_u)
            count = known[kind] = fit(demand, gaps, free_room(limit, loads[i]), [], {})
        out.append(count)
    return out


def place_switches(site: Site, racks: tuple[RackPlan, ...], loads: tuple[RackLoad, ...],
                   limits: tuple[RackLimits, ...], fabric: FatTree, key: str, switch: Switch,
                   heights: dict[str, int], assumptions: Assumptions, whole_racks: Collection[str] = (),
                   ) -> tuple[tuple[RackPlan, ...], SwitchPlacement]:
    """Rack the fabric's switches (`key` in the catalog is `switch`) on top of what `racks` already hold (the
    blueprint's and the planner's devices; `loads` are theirs; `whole_racks`: the pools of rack-scale systems).
    Returns the racks with their switches and what was placed where; switches that fit nowhere are counted per
    tier in `unplaced`."""
    located = site.racks()
    site_racks = [rack for _, _, _, rack in located]
    where, order = _order(site_racks, racks, switch, whole_racks)
    demand = switch_demand(switch)
    wanted = tiers(fabric)
    total = sum(count for _, count in wanted)
    own = _own_fits(order, site_racks, racks, loads, limits, heights, demand)
    shares = (first_fit if where == NETWORK_RACKS else level)(own, total)
    # shared budgets (row CRAHs and CDUs, panels) only for the rows that take switches
    budgets = shared_budgets(site, loads, assumptions,
                             {located[i][0] for i, share in zip(order, shares, strict=True) if share})
    rooms: dict[int, Room] = {}

    def room(i: int) -> Room:
        if i not in rooms:
            rooms[i] = open_room(located[i][2], site_racks[i], racks[i], loads[i], limits[i], budgets, heights)
        return rooms[i]

    def book(i: int, count: int) -> int:
        taken = min(count, fit(demand, room(i).gaps, room(i).free, room(i).draws, budgets))
        if taken > 0:
            take(demand, taken, room(i), budgets, from_top=True)
        return max(taken, 0)

    counts = [0] * len(racks)
    for index, share in zip(order, shares, strict=True):
        if share:
            counts[index] = book(index, share)
    left = total - sum(counts)
    spare = [i for i, room_left in zip(order, own, strict=True) if room_left > counts[i]]
    if left and spare:  # what the shared budgets turned away: most room first, with every row's budgets
        budgets.clear()
        budgets.update(shared_budgets(site, loads, assumptions))
        for index, room_of in rooms.items():  # less what this call booked already
            for name, dim, part in room_of.draws:
                budgets[name] -= getattr(demand, dim) * part * counts[index]
        for index in sorted(spare, key=lambda i: -(limits[i].kw - loads[i].power_kw)):
            taken = book(index, left)
            counts[index] += taken
            left -= taken
            if not left:
                break
    added, placed, unplaced = _by_tier(wanted, counts, key, switch.u_height)
    out = tuple(replace(rack, switches=rack.switches + tuple(extra)) if extra else rack
                for rack, extra in zip(racks, added, strict=True))
    return out, SwitchPlacement(where, placed, unplaced, sum(1 for extra in added if extra))


def _by_tier(wanted: list[tuple[str, int]], counts: list[int], key: str, u_height: int,
             ) -> tuple[list[list[PlacedSwitches]], dict[str, int], dict[str, int]]:
    """Deal the racks' counts out to the tiers in blueprint order of the racks: leaves first, then spines, then
    cores (a rack may hold the end of one tier and the start of the next)."""
    added: list[list[PlacedSwitches]] = [[] for _ in counts]
    placed = dict.fromkeys((tier for tier, _ in wanted), 0)
    tier_index = 0
    for index, room in enumerate(counts):
        while room and tier_index < len(wanted):
            tier, count = wanted[tier_index]
            taken = min(room, count - placed[tier])
            added[index].append(PlacedSwitches(tier, taken, key, u_height))
            placed[tier] += taken
            room -= taken
            if placed[tier] == count:
                tier_index += 1
    unplaced = {tier: count - placed[tier] for tier, count in wanted if count > placed[tier]}
    return added, placed, unplaced
