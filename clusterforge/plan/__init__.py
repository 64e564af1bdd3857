"""The planner: pure functions from a blueprint and the catalog to a Plan."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Server, Switch
from clusterforge.model import Cluster, SwitchedFabric
from clusterforge.physics import Assumptions
from clusterforge.plan.capacity import site_limits
from clusterforge.plan.elevation import elevation
from clusterforge.plan.fabric import port_mode, size_fat_tree
from clusterforge.plan.loads import rack_load, rack_loads
from clusterforge.plan.model import (
    FatTree,
    PlacedDevices,
    PlacementReport,
    Plan,
    RackedFabric,
    RackLimits,
    RackLoad,
    RackPlan,
)
from clusterforge.plan.nodes import pool_nodes
from clusterforge.plan.packing import auto_place, explicit_racks, pools_to_place, racked_pools
from clusterforge.plan.power_save import power_save_plan
from clusterforge.plan.slurm import slurm_plan
from clusterforge.plan.switches import place_switches
from clusterforge.plan.topology import fabric_nics, hosts_per_device, wire

__all__ = ["FatTree", "PlacedDevices", "Plan", "RackLimits", "RackLoad", "RackPlan", "build_plan",
           "fabric_endpoints"]


def fabric_endpoints(cluster: Cluster, catalog: Catalog) -> int:
    """Ports the compute fabric must carry: nodes (trays of a rack-scale system) × compute NICs of every GPU pool."""
    return sum(pool.ceiling * hosts_per_device(entry) * fabric_nics(pool, entry)
               for pool in cluster.pools for entry in (catalog.get(pool.hardware),))


def size_fabric(cluster: Cluster, catalog: Catalog) -> FatTree | None:
    """The fat tree of a switched fabric, or None (EFA, no fabric, or nothing to connect)."""
    if not isinstance(cluster.fabric, SwitchedFabric):
        return None
    endpoints = fabric_endpoints(cluster, catalog)
    if not endpoints:
        return None
    mode = port_mode(catalog.of(cluster.fabric.switch, Switch), fastest_nic_gbps(cluster, catalog))
    ratios = cluster.fabric.ratios
    return size_fat_tree(endpoints, mode.radix, ratios.leaf, cluster.fabric.tiers, mode.speed_gbps, mode.split,
                         ratios.spine)


def fastest_nic_gbps(cluster: Cluster, catalog: Catalog) -> int:
    """The fastest compute-fabric NIC of the pools on the fabric (0: none)."""
    speeds = [entry.node_nics.speed_gbps for pool in cluster.pools
              if fabric_nics(pool, entry := catalog.get(pool.hardware)) and isinstance(entry, Server)
              and entry.node_nics]
    return max(speeds, default=0)


def build_plan(
    cluster: Cluster, catalog: Catalog, assumptions: Assumptions | None = None, detail: bool = True
) -> Plan:
    """Place, name, size and wire the cluster. `assumptions` are the derating and cooling defaults the
    policies use (a PolicyConfig is one), so the planner never places what a check would reject.
    `detail=False` stops after placement
    and fabric sizing, which is all the rules read (node names, wiring and the SLURM model are for render)."""
    assumptions = assumptions or Assumptions()
    racks = explicit_racks(cluster)
    loads = rack_loads(racks, cluster, catalog)
    limits: tuple[RackLimits, ...] = ()
    unplaced: dict[str, int] = {}
    report = None
    switches = None
    fabrics: tuple[RackedFabric, ...] = ()
    elevations: tuple[tuple[tuple[int | None, ...], ...], ...] = ()
    fabric = size_fabric(cluster, catalog)
    if cluster.site is not None:
        site_racks = [rack for _, _, _, rack in cluster.site.racks()]
        heights = {p.name: catalog.of(p.hardware, Server).u_height for p in racked_pools(cluster)}
        to_rack = fabric is not None and isinstance(cluster.fabric, SwitchedFabric)
        # the rules need no limits when everything is placed by hand and there are no switches to rack
        if detail or to_rack or pools_to_place(cluster):
            limits = site_limits(cluster.site, assumptions)
            racks, unplaced, report = auto_place(cluster, catalog, racks, loads, limits, heights, assumptions)
        else:
            report = PlacementReport({}, 0, 0, {})
        if any(report.auto_placed.values()):
            loads = rack_loads(racks, cluster, catalog)
        if to_rack and isinstance(cluster.fabric, SwitchedFabric) and fabric is not None:  # after the pools
            key = cluster.fabric.switch
            whole = {p.name for p in racked_pools(cluster) if catalog.of(p.hardware, Server).form == "rack"}
            racks, switches = place_switches(cluster.site, racks, loads, limits, fabric, key,
                                             catalog.of(key, Switch), heights, assumptions, whole)
            fabrics = (RackedFabric(("fabric", "switch"), key, fabric, switches),)
            pools = {p.name: p for p in cluster.pools}
            loads = tuple(rack_load(rack, cluster, catalog, pools) if rack.switches else load
                          for rack, load in zip(racks, loads, strict=True))
        if detail:
            elevations = tuple(elevation(plan, heights, rack.u_height, rack.reserved_u)
                               for plan, rack in zip(racks, site_racks, strict=True))
    if not detail:
        return Plan(racks, loads, unplaced, fabric, limits, report, switches=switches, fabrics=fabrics)
    nodes = pool_nodes(cluster, catalog, racks, elevations)
    topology = None
    if fabric is not None and isinstance(cluster.fabric, SwitchedFabric):
        topology = wire(fabric, nodes, cluster.fabric.rail_optimized)
    slurm = slurm_plan(cluster, catalog, nodes, topology)
    return Plan(racks, loads, unplaced, fabric, limits, report, nodes, topology, slurm, switches, fabrics,
                power_save_plan(cluster, nodes, slurm))
