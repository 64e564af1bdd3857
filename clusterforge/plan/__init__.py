"""The planner: pure functions from a blueprint and the catalog to a Plan."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Server
from clusterforge.model import Cluster, SwitchedFabric
from clusterforge.plan.fabric import size_fat_tree
from clusterforge.plan.loads import rack_loads
from clusterforge.plan.model import FatTree, PlacedDevices, Plan, RackLoad, RackPlan
from clusterforge.plan.placement import place

__all__ = ["FatTree", "PlacedDevices", "Plan", "RackLoad", "RackPlan", "build_plan", "fabric_endpoints"]


def fabric_endpoints(cluster: Cluster, catalog: Catalog) -> int:
    """Ports the compute fabric must carry: nodes × compute NICs of every GPU pool."""
    total = 0
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Server) and entry.gpus and entry.nics and pool.role == "compute":
            total += pool.count * entry.nics.compute
    return total


def build_plan(cluster: Cluster, catalog: Catalog) -> Plan:
    racks, unplaced = place(cluster)
    fabric: FatTree | None = None
    if isinstance(cluster.fabric, SwitchedFabric):
        endpoints = fabric_endpoints(cluster, catalog)
        if endpoints:
            switch = catalog.get(cluster.fabric.switch)
            radix = getattr(switch, "ports", 64)
            fabric = size_fat_tree(endpoints, radix, cluster.fabric.oversubscription, cluster.fabric.tiers)
    return Plan(racks, rack_loads(racks, cluster, catalog), unplaced, fabric)
