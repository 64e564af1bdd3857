"""Teams that share one facility: blueprints that include the same site file are checked together.

Each team's blueprint places its pools into the shared racks (`placement:`); alone it sees only its own
load. The combined blueprint holds every team's pools (named `<team>-<pool>`) in the one site, and its plan
racks every team's fabric switches after them, so the facility rules see everything each team puts in the
racks, rows and hall: a teammate can add load, never take any away. Findings point into the file that wrote
the thing: racks into the site file, placements and pools into the team's file, a team's switches
(`teams.<team>.fabric.switch`) into the team's file. Their waivers name the site: `cluster: site:<site name>`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge.blueprint.load import Loaded, from_source
from clusterforge.catalog import Server, Switch
from clusterforge.files.yamlsource import PathKey, Source
from clusterforge.model import SwitchedFabric
from clusterforge.physics import Assumptions
from clusterforge.plan import Plan, build_plan
from clusterforge.plan.capacity import site_limits
from clusterforge.plan.packing import racked_pools

if TYPE_CHECKING:
    from clusterforge.policies.engine import Verdict
    from clusterforge.policies.policy_inputs import Policy

SITE_SCOPE = "site:"  # the `cluster` of a combined facility finding (and of its waivers): `site:<site name>`


def shared_site(loaded: Loaded) -> Source | None:
    """The site file a blueprint includes, if it includes one."""
    inner = loaded.source.includes.get(("site",))
    return inner[0] if inner is not None and inner[1] == () else None


def groups(loadeds: Sequence[Loaded]) -> list[list[Loaded]]:
    """Blueprints grouped by the site file they include; only groups of two or more."""
    by_site: dict[str, list[Loaded]] = defaultdict(list)
    for loaded in loadeds:
        site = shared_site(loaded)
        if site is not None:
            by_site[str(Path(site.file).resolve())].append(loaded)
    return [group for group in by_site.values() if len(group) > 1]


def combine(group: Sequence[Loaded]) -> Loaded:
    """One blueprint with every team's pools and placements in the shared site."""
    site = shared_site(group[0])
    assert site is not None
    site_data = {k: v for k, v in site.data.items() if k not in ("apiVersion", "kind")}
    pools: list[Any] = []
    placement: list[Any] = []
    includes: dict[PathKey, tuple[Source, PathKey]] = {("site",): (site, ())}
    for t, loaded in enumerate(group):
        team = loaded.cluster.name
        raw = loaded.source
        if isinstance(loaded.cluster.fabric, SwitchedFabric):
            includes[switch_path(group, t)] = (raw, ("fabric", "switch"))
        for j, pool in enumerate(loaded.cluster.pools):
            includes[("pools", len(pools))] = (raw, ("pools", j))
            # as the team wrote it: defaults a target adds to its own pools are not written into the site's
            written = pool.model_dump(exclude_none=True, exclude_unset=True, exclude={"partition"})
            pools.append({**written, "name": f"{team}-{pool.name}"})
        for i, entry in enumerate(loaded.cluster.placement):
            includes[("placement", len(placement))] = (raw, ("placement", i))
            placement.append({**entry.model_dump(exclude_none=True), "pool": f"{team}-{entry.pool}"})
    data = {"apiVersion": "clusterforge/v1", "kind": "Cluster", "name": "combined", "target": "onprem",
            "pools": pools, "site": site_data, "placement": placement}
    first = group[0]
    return from_source(Source(data, site.file, {}, includes=includes), first.catalog)


def switch_path(group: Sequence[Loaded], index: int) -> PathKey:
    """Where the combined blueprint names team `index`'s fabric switch (`teams.<team>.fabric.switch`)."""
    return ("teams", group[index].cluster.name, "fabric", "switch")


def combined_plan(group: Sequence[Loaded], combined: Loaded, assumptions: Assumptions) -> Plan:
    """The combined blueprint's plan with every team's fabric switches racked after all the pools, team by team,
    as the planner racks one blueprint's (plan/switches.py): what a team's blueprint adds to the site is there."""
    from clusterforge.plan import size_fabric
    from clusterforge.plan.loads import rack_loads
    from clusterforge.plan.model import RackedFabric
    from clusterforge.plan.switches import place_switches

    cluster, catalog = combined.cluster, combined.catalog
    plan = build_plan(cluster, catalog, assumptions, detail=False)
    site = cluster.site
    assert site is not None
    limits = plan.limits or site_limits(site, assumptions)
    heights = {p.name: catalog.of(p.hardware, Server).u_height for p in racked_pools(cluster)}
    whole = {p.name for p in racked_pools(cluster) if catalog.of(p.hardware, Server).form == "rack"}
    racks, loads, fabrics = plan.racks, plan.loads, []
    for t, loaded in enumerate(group):
        fabric = loaded.cluster.fabric
        tree = size_fabric(loaded.cluster, loaded.catalog)
        if tree is None or not isinstance(fabric, SwitchedFabric):
            continue
        switch = loaded.catalog.of(fabric.switch, Switch)
        racks, placement = place_switches(site, racks, loads, limits, tree, fabric.switch, switch, heights,
                                          assumptions, whole)
        loads = rack_loads(racks, cluster, catalog)
        fabrics.append(RackedFabric(switch_path(group, t), fabric.switch, tree, placement))
    return replace(plan, racks=racks, loads=loads, limits=limits, fabrics=tuple(fabrics))


def check_together(group: Sequence[Loaded], policy: Policy) -> tuple[Loaded, Verdict]:
    """The facility rules (those that need a site) once over the combined load of the teams of one site; the
    findings belong to the site (`cluster: site:<name>` in a waiver), not to any one team."""
    from clusterforge.core.bulk import bulk_objects
    from clusterforge.policies import evaluate
    from clusterforge.policies.registry import REGISTRY

    combined = combine(group)
    site = combined.cluster.site
    assert site is not None
    others = sorted(r.id for r in REGISTRY.values() if not r.needs_site)
    inputs = policy.inputs
    with bulk_objects():
        plan = combined_plan(group, combined, policy.config)
        verdict = evaluate(combined, plan, policy.config, (), (*inputs.skip, *others), inputs.fail_level,
                           inputs.today, scope=f"{SITE_SCOPE}{site.name}")
    return combined, verdict
