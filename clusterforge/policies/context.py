"""What every rule reads: the blueprint, the catalog, the plan and the thresholds, with shared lookups."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from clusterforge.blueprint.load import Loaded
from clusterforge.catalog import Catalog, Instance, Server
from clusterforge.model import Cluster, Pool, Rack, Site
from clusterforge.physics.electrical import derated_kw
from clusterforge.physics.electrical import side_kw as capacity_side_kw
from clusterforge.plan import Plan, RackLoad
from clusterforge.plan.loads import device_power_kw
from clusterforge.policies.config import PolicyConfig
from clusterforge.policies.findings import RackRef
from clusterforge.target_kernel import Target, in_use, target_of


@dataclass
class Context:
    loaded: Loaded
    plan: Plan
    config: PolicyConfig = field(default_factory=PolicyConfig)
    _sides: dict[tuple[int, str], float] = field(default_factory=dict, repr=False)

    @property
    def cluster(self) -> Cluster:
        return self.loaded.cluster

    @cached_property
    def target(self) -> Target:
        return target_of(self.cluster)

    @cached_property
    def targets(self) -> frozenset[str]:
        """The names of the targets in use: the cluster's and each one a pool names (a target's rules run when its
        target is among them)."""
        return frozenset(target.name for target in in_use(self.cluster))

    @property
    def catalog(self) -> Catalog:
        return self.loaded.catalog

    @property
    def site(self) -> Site:
        """The facility; only rules registered with needs_site=True call this."""
        assert self.cluster.site is not None
        return self.cluster.site

    @cached_property
    def pools(self) -> dict[str, Pool]:
        return {p.name: p for p in self.cluster.pools}

    def server(self, pool: Pool) -> Server | None:
        entry = self.catalog.get(pool.hardware)
        return entry if isinstance(entry, Server) else None

    def instance(self, pool: Pool) -> Instance | None:
        entry = self.catalog.get(pool.hardware)
        return entry if isinstance(entry, Instance) else None

    def device_kw(self, pool: Pool) -> float:
        server = self.server(pool)
        return device_power_kw(pool, server) if server else 0.0

    def rack(self, load: RackLoad) -> Rack:
        """The blueprint rack behind a planned rack."""
        return self.site.rows[load.rack.row_index].racks[load.rack.rack_index]

    @cached_property
    def _rack_pairs(self) -> list[tuple[RackLoad, Rack]]:
        return [(load, self.rack(load)) for load in self.plan.loads]

    def racks(self) -> list[tuple[RackLoad, Rack]]:
        """Every planned rack with its blueprint rack, in blueprint order."""
        return self._rack_pairs

    def side_kw(self, rack: Rack, side: str) -> float:
        """Usable kW of all feeds on one side (A or B) of a rack (cached: several rules ask per rack)."""
        key = (id(rack), side)
        cached = self._sides.get(key)
        if cached is None:
            cached = self._sides[key] = capacity_side_kw(rack, side, self.config.electrical)
        return cached

    def feed_kw(self, rack: Rack, index: int) -> float:
        return derated_kw(rack.feeds[index], self.config.electrical)


def rack_ref(load: RackLoad) -> RackRef:
    """Where a finding about one planned rack is, for the report's rack cards and text output's headings."""
    return RackRef(load.rack.row, load.rack.name)


def from_loaded(loaded: Loaded, config: PolicyConfig | None = None, plan: Plan | None = None) -> Context:
    from clusterforge.plan import build_plan

    config = config or PolicyConfig()
    if plan is None:
        plan = build_plan(loaded.cluster, loaded.catalog, config, detail=False)
    return Context(loaded, plan, config)
