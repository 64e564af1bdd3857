"""The Plan: everything a blueprint implies (placement, fabric, loads), computed once and shared by all stages."""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterforge.catalog import Server
from clusterforge.yamlsource import PathKey


@dataclass(frozen=True)
class PlacedDevices:
    """`count` devices of one pool stacked in a rack from `position` (lowest U, 1-based) upwards."""

    pool: str
    count: int
    position: int | None = None
    path: PathKey | None = None  # the blueprint entry when placed explicitly; None when the planner placed it

    @property
    def explicit(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class RackPlan:
    """One rack of the site and what stands in it."""

    row_index: int
    rack_index: int
    row: str
    name: str
    devices: tuple[PlacedDevices, ...] = ()

    @property
    def path(self) -> PathKey:
        return ("site", "rows", self.row_index, "racks", self.rack_index)


@dataclass(frozen=True)
class RackLoad:
    """Aggregates of one rack, computed in one pass; every physical rule reads these numbers."""

    rack: RackPlan
    servers: tuple[tuple[PlacedDevices, Server], ...]
    u_used: int
    weight_kg: float
    power_kw: float
    air_heat_kw: float
    liquid_heat_kw: float

    @property
    def device_count(self) -> int:
        return sum(placed.count for placed, _ in self.servers)


@dataclass(frozen=True)
class FatTree:
    """A folded-Clos (fat-tree) fabric sized for `endpoints` ports of switches with `radix` ports."""

    endpoints: int
    radix: int
    tiers: int
    oversubscription: float
    leaf_downlinks: int
    leaf_uplinks: int
    leaves: int
    spines: int
    cores: int
    capacity: int  # most endpoints this many tiers of this radix can carry at this oversubscription

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    @property
    def cables(self) -> dict[str, int]:
        """Cables per tier: node-leaf, leaf-spine and spine-core."""
        out = {"node-leaf": self.endpoints}
        if self.tiers >= 2:
            out["leaf-spine"] = self.leaves * self.leaf_uplinks
        if self.tiers >= 3:
            out["spine-core"] = self.spines * (self.radix // 2)
        return out


@dataclass(frozen=True)
class Plan:
    racks: tuple[RackPlan, ...] = ()
    loads: tuple[RackLoad, ...] = ()
    unplaced: dict[str, int] = field(default_factory=dict)  # pool -> nodes the planner found no room for
    fabric: FatTree | None = None
