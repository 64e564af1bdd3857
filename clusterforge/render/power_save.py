"""slurm.conf's power-save settings: which nodes slurmctld powers up on demand and down when idle, and the programs
it runs to do so (`clusterforge-resume`, `clusterforge-suspend`: pyproject's [project.scripts], clusterforge/powersave).

Written only when the programs launch some pool's nodes (`targets.slurm_launched`: a pool with a `max_count`, or
any AWS compute pool): a cluster without one renders exactly as before. The layout follows ParallelCluster's: every
node of such a pool is `State=CLOUD`, the static ones (the first `count`) too, and those are listed in
SuspendExcNodes so slurmctld never powers them down; the reconcile timer powers them up and keeps them up. Nodes of
the other pools are excluded the same way, as are the partitions with no power-saved pool (SuspendExcParts): SLURM
would otherwise power down any idle node, on-prem ones included (power_save.shtml).
"""

from __future__ import annotations

from clusterforge.catalog.software import version_tuple
from clusterforge.errors import ClusterforgeError
from clusterforge.hostlist import compress
from clusterforge.model import Cluster
from clusterforge.plan.model import PoolNodes, SlurmPlan
from clusterforge.render.context import RenderContext
from clusterforge.targets import pool_target, slurm_launched, slurm_launches_nodes

# Where the slurm role puts the power-save console scripts on the controllers (beside the health and reboot
# programs); slurmctld runs them as SlurmUser with a hostlist argument.
RESUME_PROGRAM = "/usr/local/sbin/clusterforge-resume"
SUSPEND_PROGRAM = "/usr/local/sbin/clusterforge-suspend"

Pairs = list[tuple[str, str]]

# TCPTimeout for a cluster whose nodes are on more than one site (an on-prem controller bursting into the cloud):
# SLURM's 2 s default covers one lost SYN (Linux retransmits after 1 s, then 2 s, 4 s); 10 s rides out three on a
# VPN or Direct Connect link (SchedMD's elastic computing guide: raise TCPTimeout across a WAN). slurm.settings
# overrides it.
WAN_TCP_TIMEOUT_S = 10

# SLURM before 23.11 caches a node's address after its first connection, and a launched node's address changes with
# every launch: those releases need `CommunicationParameters=NoAddrCache`. 23.11 removed the cache option (SchedMD's
# CHANGELOG/slurm-23.11.md: "Remove NoAddrCache CommunicationParameter"); 24.11's slurmctld logs an error that it is
# defunct, so it is written only for older pins.
ADDR_CACHE_OPTION_REMOVED_IN = (23, 11)


def static_nodes(pool: PoolNodes, count: int) -> str:
    """The first `count` hosts of the pool (its always-on part) as a hostlist; '' for none."""
    hosts = count * pool.domain_size
    if hosts <= 0:
        return ""
    return compress(pool.name(n) for n in range(1, hosts + 1))


def excluded_nodes(cluster: Cluster, ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    """Hostlists slurmctld never powers down: the static part of each pool the programs launch, and every node of
    a compute pool they do not."""
    out = []
    for line in slurm.nodes:
        pool, nodes = cluster.pool(line.pool), ctx.plan.pool_nodes(line.pool)
        part = static_nodes(nodes, pool.count) if slurm_launched(cluster, pool) else line.hostlist
        if part:
            out.append(ctx.conf(part, ("pools", cluster.pools.index(pool), "count")))
    return out


def excluded_partitions(cluster: Cluster, slurm: SlurmPlan) -> list[str]:
    """Partitions never powered down: those the blueprint lists, and those with no power-saved pool."""
    saved = {p.name for p in cluster.pools if p.power_saved}
    listed = list(cluster.slurm.power_save.exclude_partitions)
    return list(dict.fromkeys([*listed, *(p.name for p in slurm.partitions if not set(p.pools) & saved)]))


def check_controllers(ctx: RenderContext, slurm: SlurmPlan) -> None:
    """Refuse a slurmctld host that slurmctld could power down: a node of a power-saved pool beyond its `count`
    (a cluster without a controller or login pool runs slurmctld on its first compute node)."""
    cluster = ctx.loaded.cluster
    for pool in (p for p in cluster.pools if p.power_saved):
        nodes = ctx.plan.pool_nodes(pool.name)
        dynamic = {nodes.name(n) for n in range(pool.count * nodes.domain_size + 1, nodes.count + 1)}
        host = next((h for h in slurm.controllers or (slurm.controller,) if h in dynamic), None)
        if host is not None:
            raise ClusterforgeError(ctx.loaded.source.problem(
                ("pools", cluster.pools.index(pool), "count"), f"slurmctld would run on {host}, a node of pool "
                f"{pool.name} that is powered down when idle", "add a pool with role controller (or login), or give "
                "the pool count ≥ 1 so its first node stays on"))


def pairs(ctx: RenderContext, slurm: SlurmPlan) -> Pairs:
    """The power-save lines (none when the programs launch no pool). ResumeTimeout is written with the recovery
    settings (slurm.recovery.resume_timeout_s, whose default follows power saving)."""
    cluster = ctx.loaded.cluster
    spec = cluster.slurm.power_save
    wan = [("TCPTimeout", str(WAN_TCP_TIMEOUT_S))] if spans_sites(cluster) else []
    if not slurm_launches_nodes(cluster):  # a TreeWidth the blueprint gives applies to any cluster
        return wan + ([] if spec.tree_width is None else [("TreeWidth", str(spec.tree_width))])
    check_controllers(ctx, slurm)
    out: Pairs = [
        ("ResumeProgram", RESUME_PROGRAM),
        ("SuspendProgram", SUSPEND_PROGRAM),
        # a node that did not register within ResumeTimeout: terminate its instance so it neither bills nor joins
        # late (slurm-gcp v6 runs its suspend program here too); reconcile removes any it misses
        ("ResumeFailProgram", SUSPEND_PROGRAM),
        ("SuspendTime", str(spec.suspend_time_s)),
        ("SuspendTimeout", str(spec.suspend_timeout_s)),
        ("ResumeRate", str(spec.resume_rate)),
        ("SuspendRate", str(spec.suspend_rate)),
    ]
    if caches_addresses(cluster.software.slurm):
        # addresses change with every launch: look a node's address up on each connection (scale.md)
        out.append(("CommunicationParameters", "NoAddrCache"))
    out += wan
    width = spec.resolved_tree_width()
    if width is not None:
        out.append(("TreeWidth", str(width)))
    nodes = excluded_nodes(cluster, ctx, slurm)
    if nodes:
        out.append(("SuspendExcNodes", ",".join(nodes)))
    parts = excluded_partitions(cluster, slurm)
    if parts:
        out.append(("SuspendExcParts", ",".join(ctx.conf(p, ("slurm", "partitions")) for p in parts)))
    return out


def caches_addresses(slurm_version: str) -> bool:
    """The pinned SLURM release caches node addresses unless told not to (before 23.11). A pin that is not a
    version (SW-002 reports it) is taken as current."""
    release = version_tuple(slurm_version)
    return bool(release) and release < ADDR_CACHE_OPTION_REMOVED_IN


def spans_sites(cluster: Cluster) -> bool:
    """The nodes run on more than one target: an on-prem cluster with a cloud pool (hybrid, docs/hybrid.md)."""
    return len({pool_target(cluster, p).name for p in cluster.pools}) > 1


def slurmctld_parameters(cluster: Cluster) -> list[str]:
    """SlurmctldParameters options power saving adds: a node powered down returns to IDLE (not DOWN) so it can be
    powered up again (`idle_on_node_suspend`), and `cloud_dns` when the nodes' names resolve in DNS."""
    if not slurm_launches_nodes(cluster):
        return []
    return ["idle_on_node_suspend", *(["cloud_dns"] if cluster.slurm.power_save.cloud_dns else [])]


def private_data(cluster: Cluster) -> list[str]:
    """PrivateData with `cloud` added under power saving: without it sinfo hides the nodes powered down."""
    listed: list[str] = list(cluster.slurm.private_data)
    if slurm_launches_nodes(cluster) and "cloud" not in listed:
        listed.append("cloud")
    return listed
