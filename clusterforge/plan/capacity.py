"""Rack limits and device demands in the same units, so placement is arithmetic on counts.

The limits use the same formulas and settings as the policies (PWR-001/002/006, RCK-001..005, CLG-001..004),
so whatever the planner places passes those checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.catalog import Server
from clusterforge.model import LiquidCooling, Pool, Rack, RdhxCooling, Site
from clusterforge.physics import Assumptions
from clusterforge.physics.electrical import rack_kw
from clusterforge.plan.loads import device_power_kw
from clusterforge.plan.model import RackLimits


@dataclass(frozen=True)
class Demand:
    """What one device takes from a rack: space, weight, power and the heat it sends to air and to liquid."""

    u: int
    kw: float
    kg: float
    air_kw: float
    liquid_kw: float


def device_demand(pool: Pool, server: Server) -> Demand:
    kw = device_power_kw(pool, server)
    liquid = kw * server.liquid_heat_fraction
    return Demand(server.u_height, kw, server.weight_kg, kw - liquid, liquid)


def own_cdus(rack: Rack) -> bool:
    """The rack has CDUs of its own: its liquid heat stays off its row's CDUs (CLG-004 checks them per rack)."""
    return isinstance(rack.cooling, LiquidCooling) and bool(rack.cooling.cdu_kw)


def liquid_capacity_kw(cooling: LiquidCooling) -> float:
    """Liquid heat a rack may take: its loop's rating and, where it has CDUs of its own, their N+1 capacity
    (the smaller of the two when both are stated)."""
    limits = [cooling.liquid_kw] if cooling.liquid_kw is not None else []
    if cooling.cdu_kw:
        limits.append(in_rack_cdu_kw(cooling))
    return min(limits)


def in_rack_cdu_kw(cooling: LiquidCooling) -> float:
    """What a rack's own CDUs carry with one part failed: the units in full when each has a spare pump
    (`cdu_pumps: n+1`), else Σ − the largest unit."""
    return sum(cooling.cdu_kw) if cooling.cdu_pumps == "n+1" else n_plus_one_kw(cooling.cdu_kw)


def rack_limits(rack: Rack, site: Site, assumptions: Assumptions) -> RackLimits:
    """The rack's budget in every dimension the planner packs against."""
    kg = rack.max_weight_kg
    if site.floor_load_kg_per_m2 is not None:
        kg = min(kg, site.floor_load_kg_per_m2 * rack.footprint_m2)
    cooling = rack.cooling
    liquid = isinstance(cooling, LiquidCooling)
    return RackLimits(
        u=rack.u_height - rack.reserved_u,
        kw=rack_kw(rack, assumptions.electrical),
        kg=kg,
        tare_kg=rack.tare_weight_kg,
        air_kw=assumptions.cooling.air_capacity_kw(cooling.kind, cooling.air_kw),
        liquid_kw=liquid_capacity_kw(cooling) if isinstance(cooling, LiquidCooling) else 0.0,
        liquid=liquid,
    )


def site_limits(site: Site, assumptions: Assumptions) -> tuple[RackLimits, ...]:
    """`rack_limits` of every rack, in blueprint order, worked out once per kind of rack: a hall repeats a few
    kinds thousands of times, and racks of one kind share one RackLimits (plan/switches.py groups by it)."""
    kinds: dict[tuple[object, ...], RackLimits] = {}
    out = []
    for _, _, _, rack in site.racks():
        cooling = rack.cooling.__dict__  # not getattr: a missing field costs pydantic an exception
        kind = (rack.u_height, rack.reserved_u, rack.max_weight_kg, rack.tare_weight_kg, rack.footprint_m2,
                cooling["kind"], cooling["air_kw"], cooling.get("liquid_kw"), tuple(cooling.get("cdu_kw", ())),
                tuple([(feed.side, feed.voltage, feed.amps, feed.phase) for feed in rack.feeds]))
        limit = kinds.get(kind)
        if limit is None:
            limit = kinds[kind] = rack_limits(rack, site, assumptions)
        out.append(limit)
    return tuple(out)


def n_plus_one_kw(units: list[float]) -> float:
    """Capacity of a plant with one unit held in reserve: Σ − largest (0 when none are listed)."""
    return sum(units) - max(units, default=0.0)


def room_heat_kw(air_heat_kw: float, rack: Rack) -> float:
    """Heat a rack leaves to its row's CRAHs: a rear door removes up to its rating first (as CLG-004 counts)."""
    if isinstance(rack.cooling, RdhxCooling):
        return max(0.0, air_heat_kw - rack.cooling.air_kw)
    return air_heat_kw


def panel_shares(rack: Rack) -> dict[str, float]:
    """Share of the rack's load each panel carries after the other side fails (as PWR-006 counts): a feed
    carries the rack split over the feeds of its side (over all feeds when the rack is not A/B)."""
    both = {f.side for f in rack.feeds} == {"A", "B"}
    shares: dict[str, float] = {}
    for feed in rack.feeds:
        if feed.panel is not None:
            split = sum(1 for f in rack.feeds if f.side == feed.side) if both else len(rack.feeds)
            shares[feed.panel] = shares.get(feed.panel, 0.0) + 1 / split
    return shares


def suits(server: Server, rack: Rack, limits: RackLimits) -> bool:
    """Whether the planner may put the hardware in this rack at all: not a rack the site keeps for the network
    (`role: network`), and the right cooling kind, airflow direction and mounting depth."""
    if rack.role == "network":
        return False
    if server.cooling != "air" and not limits.liquid:
        return False
    if server.airflow != rack.airflow:
        return False
    return rack.mounting_depth_mm is None or server.depth_mm <= rack.mounting_depth_mm
