"""slurm/clusterforge-powersave.json: which provider powers which nodes and with what, for the controller's power-save
programs (clusterforge/powersave, which read it as `PowerSaveConfig`; the slurm role installs it as
/etc/slurm/clusterforge-powersave.json).

One group per pool the programs launch (the plan's `PowerSavePlan`), the grain of the launch templates the stack
owns: a pool has one instance type, one zone and one capacity reservation or block, so (pool, type, zone,
reservation) is the pool. Written only for pools whose target's provider can power them (every cloud pool, an
on-prem pool with a `bmc:`), several targets' in one file for a hybrid (each group names its provider where it is
not the file's); a cluster the programs launch no node of gets no file. The file is built as the model the
programs load, so the two cannot disagree on a field.
"""

from __future__ import annotations

import json
from typing import Protocol

from clusterforge.catalog import Entry
from clusterforge.core.errors import ClusterforgeError
from clusterforge.model import Cluster, Pool
from clusterforge.powersave.config import FLEET_MAX, NodeGroup, PowerSaveConfig
from clusterforge.render.change_effects import Action, Effect
from clusterforge.render.context import RenderContext
from clusterforge.render.manifest import WholeFile
from clusterforge.render.power_save import plan_of
from clusterforge.target_kernel import Target, can_power, node_power, pool_target, stage_part

FILE = "slurm/clusterforge-powersave.json"
# What changing it takes on day two (clusterforge.render.manifest): nothing on running nodes. The programs read it
# afresh at every call (slurmctld runs them per resume or suspend, the timer per reconcile pass), so a pool that
# grows, shrinks or gets another template is used from the next call on; no daemon reads it.
DAY_TWO = {FILE: WholeFile((Effect(Action.NONE, "none", "the power-save programs read it at each call; no daemon "
                                   "reads it"),))}
class PowerSaveLaunch(Protocol):
    """What render asks of a target whose provider launches a pool's nodes (its `powersave_launch.launch_data`):
    the group's launch data in the provider's own words, which the provider checks where it runs. A target without
    that module gives none (servers powered through their BMCs are not launched)."""

    def __call__(self, cluster: Cluster, pool: Pool, entry: Entry | None) -> dict[str, str]:
        ...


class LaunchRegion(Protocol):
    """Where a target's provider launches (its `powersave_launch.region`: the cloud region its API is called in);
    the file says it once for every group."""

    def __call__(self, cluster: Cluster) -> str | None:
        ...


def _launch_data(target: Target) -> PowerSaveLaunch | None:
    part = stage_part(target, "powersave_launch")
    found: PowerSaveLaunch | None = None if part is None else part.launch_data
    return found


def _region(cluster: Cluster, targets: list[Target]) -> str:
    """The region of the first of these targets that launches in one ("" where none does: servers have BMCs)."""
    for target in dict.fromkeys(targets):
        part = stage_part(target, "powersave_launch")
        region: LaunchRegion | None = None if part is None else part.region
        if region is not None and (found := region(cluster)):
            return found
    return ""


def group(ctx: RenderContext, pool: Pool, provider: str | None = None) -> NodeGroup:
    """The pool's nodes, its static part and its launch data; `provider` where it is not the file's."""
    cluster = ctx.loaded.cluster
    nodes = ctx.plan.pool_nodes(pool.name)
    made = _launch_data(pool_target(cluster, pool))
    launch = {} if made is None else made(cluster, pool, ctx.loaded.catalog.get(pool.hardware))
    return NodeGroup(name=pool.name, nodes=nodes.hostlist, static=plan_of(ctx).static_of(pool.name),
                     scaling=pool.scaling, provider=provider, launch=launch)


def _needs(providers: list[type], attribute: str) -> tuple[str, ...]:
    """What the providers' classes say a controller needs (OS_PACKAGES, CONTROLLER_FILES), each once, in order."""
    return tuple(dict.fromkeys(item for made in providers for item in getattr(made, attribute, ())))


def config(ctx: RenderContext) -> PowerSaveConfig | None:
    """The file's content, or None when no pool the programs launch has a provider. The file names the first
    pool's provider; a pool of another target's (a hybrid's on-prem pool beside its cloud pool) names its own."""
    cluster = ctx.loaded.cluster
    launched = plan_of(ctx).launched
    pools = [p for p in cluster.pools if p.name in launched and can_power(cluster, p)]
    if not pools:
        return None
    spec = cluster.slurm.power_save
    if spec.launch_batch_size > FLEET_MAX:
        why = f"launch_batch_size {spec.launch_batch_size:,} is above the {FLEET_MAX:,} nodes one launch may ask for"
        raise ClusterforgeError(ctx.loaded.source.problem(("slurm", "power_save", "launch_batch_size"), why))
    targets = [pool_target(cluster, p) for p in pools]
    provider = targets[0].name  # the programs make its powersave.PROVIDER
    providers = [power.provider for t in dict.fromkeys(targets) if (power := node_power(t)) is not None]
    return PowerSaveConfig(cluster=cluster.name, provider=provider, region=_region(cluster, targets),
                           controller_packages=_needs(providers, "OS_PACKAGES"),
                           controller_files=_needs(providers, "CONTROLLER_FILES"),
                           batch_size=spec.launch_batch_size,
                           insufficient_capacity_timeout_s=spec.insufficient_capacity_timeout_s,
                           groups=tuple(group(ctx, p, None if t.name == provider else t.name)
                                        for p, t in zip(pools, targets, strict=True)))


def render(ctx: RenderContext) -> dict[str, str]:
    made = config(ctx)
    if made is None:
        return {}
    return {FILE: json.dumps(made.model_dump(mode="json", exclude_none=True), indent=2) + "\n"}
