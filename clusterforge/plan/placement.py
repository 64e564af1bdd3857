"""Rack placement: the blueprint's explicit placements (auto-placement of unplaced pools builds on this)."""

from __future__ import annotations

from clusterforge.model import Cluster
from clusterforge.plan.model import PlacedDevices, RackPlan


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


def place(cluster: Cluster) -> tuple[tuple[RackPlan, ...], dict[str, int]]:
    """(racks with their devices, nodes per pool left unplaced)."""
    racks = explicit_racks(cluster)
    if cluster.site is None:
        return racks, {}
    placed = {d.pool for r in racks for d in r.devices}
    unplaced = {p.name: p.count for p in cluster.pools if p.name not in placed and p.role != "storage"}
    return racks, unplaced
