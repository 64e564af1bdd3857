"""Per-rack aggregates in one pass: U, weight, power and heat (air and liquid) from the catalog's nameplates,
of the pools' devices and of the fabric switches the planner racked."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Server, Switch
from clusterforge.model import Cluster, Pool
from clusterforge.plan.model import RackLoad, RackPlan


def device_power_kw(pool: Pool, server: Server) -> float:
    """Nameplate draw: a declared figure may raise it, never lower it (PWR-004 reports the attempt)."""
    return max(server.max_power_kw, pool.max_power_kw or 0.0)


def rack_load(rack: RackPlan, cluster: Cluster, catalog: Catalog, pools: dict[str, Pool]) -> RackLoad:
    """The rack's aggregates. Liquid-cooled hardware sends its liquid share to the rack's loop only where the
    rack has one (cooling kind `liquid`); in any other rack there is no loop, so all of its heat goes to air."""
    site_rack = cluster.site.rows[rack.row_index].racks[rack.rack_index] if cluster.site is not None else None
    has_loop = site_rack is None or site_rack.cooling.kind == "liquid"
    servers = []
    u = 0
    kg = power = air = liquid = 0.0
    for placed in rack.devices:
        pool = pools[placed.pool]
        server = catalog.of(pool.hardware, Server)
        servers.append((placed, server))
        kw = device_power_kw(pool, server) * placed.count
        u += server.u_height * placed.count
        kg += server.weight_kg * placed.count
        power += kw
        fraction = server.liquid_heat_fraction if has_loop else 0.0
        liquid += kw * fraction
        air += kw * (1.0 - fraction)
    switches = []
    for placed_switches in rack.switches:  # fabric switches are air-cooled: all their heat goes to air
        switch = catalog.of(placed_switches.switch, Switch)
        switches.append((placed_switches, switch))
        u += switch.u_height * placed_switches.count
        kg += switch.weight_kg * placed_switches.count
        power += switch.max_power_kw * placed_switches.count
        air += switch.max_power_kw * placed_switches.count
    return RackLoad(rack, tuple(servers), u, kg, power, air, liquid, tuple(switches))


def rack_loads(racks: tuple[RackPlan, ...], cluster: Cluster, catalog: Catalog) -> tuple[RackLoad, ...]:
    pools = {p.name: p for p in cluster.pools}
    return tuple(rack_load(rack, cluster, catalog, pools) for rack in racks)
