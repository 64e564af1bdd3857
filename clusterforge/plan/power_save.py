"""slurmctld's power saving, decided: which nodes slurmctld powers up on demand and down when idle, which it never
powers down, and the settings that follow (render/power_save.py writes them into slurm.conf, render/powersave_file.py
the programs' file).

The programs launch a pool's nodes (`target_kernel.slurm_launched`) when it has a `max_count`, or when its target
launches it that way (any AWS compute pool); a cluster without such a pool renders exactly as before. The layout
follows ParallelCluster's: every node of such a pool is `State=CLOUD`, the static ones (the first `count`) too, and
those are listed in SuspendExcNodes so slurmctld never powers them down; the reconcile timer powers them up and keeps
them up. Nodes of the other pools are excluded the same way, as are the partitions with no power-saved pool
(SuspendExcParts): SLURM would otherwise power down any idle node, on-prem ones included (power_save.shtml).
"""

from __future__ import annotations

from clusterforge.catalog.software import version_tuple
from clusterforge.core.hostlist import compress
from clusterforge.model import Cluster
from clusterforge.plan.model import PoolNodes, PowerSavePlan, SlurmPlan
from clusterforge.target_kernel import pool_target, slurm_launched

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


def caches_addresses(slurm_version: str) -> bool:
    """The pinned SLURM release caches node addresses unless told not to (before 23.11). A pin that is not a
    version (SW-002 reports it) is taken as current."""
    release = version_tuple(slurm_version)
    return bool(release) and release < ADDR_CACHE_OPTION_REMOVED_IN


def spans_sites(cluster: Cluster) -> bool:
    """The nodes run on more than one target: an on-prem cluster with a cloud pool (hybrid, docs/hybrid.md)."""
    return len({pool_target(cluster, p).name for p in cluster.pools}) > 1


def idle_controller(cluster: Cluster, nodes: dict[str, PoolNodes], slurm: SlurmPlan) -> tuple[int, str] | None:
    """A slurmctld host that slurmctld could power down, with its pool's index: a node of a power-saved pool beyond
    its `count` (a cluster without a controller or login pool runs slurmctld on its first compute node)."""
    for index, pool in enumerate(cluster.pools):
        if not pool.power_saved:
            continue
        named = nodes[pool.name]
        dynamic = {named.name(n) for n in range(pool.count * named.domain_size + 1, named.count + 1)}
        host = next((h for h in slurm.controllers or (slurm.controller,) if h in dynamic), None)
        if host is not None:
            return index, host
    return None


def power_save_plan(cluster: Cluster, pools: tuple[PoolNodes, ...], slurm: SlurmPlan) -> PowerSavePlan:
    """What slurmctld powers: nothing (and only the settings any cluster may have) unless the programs launch some
    pool's nodes."""
    spec = cluster.slurm.power_save
    wan = WAN_TCP_TIMEOUT_S if spans_sites(cluster) else None
    launched = tuple(p.name for p in cluster.pools if slurm_launched(cluster, p))
    private = tuple(cluster.slurm.private_data)
    if not launched:  # a TreeWidth the blueprint gives applies to any cluster
        return PowerSavePlan(tcp_timeout_s=wan, tree_width=spec.tree_width, private_data=private)
    nodes = {p.pool: p for p in pools}
    static = tuple((name, static_nodes(nodes[name], cluster.pool(name).count)) for name in launched)
    excluded = []
    for line in slurm.nodes:
        pool = cluster.pool(line.pool)
        part = dict(static)[pool.name] if pool.name in launched else line.hostlist
        if part:
            excluded.append((cluster.pools.index(pool), part))
    saved = {p.name for p in cluster.pools if p.power_saved}
    listed = list(spec.exclude_partitions)
    partitions = tuple(dict.fromkeys([*listed, *(p.name for p in slurm.partitions if not set(p.pools) & saved)]))
    return PowerSavePlan(
        launched=launched, static=static, excluded_nodes=tuple(excluded), excluded_partitions=partitions,
        idle_controller=idle_controller(cluster, nodes, slurm), tcp_timeout_s=wan,
        no_addr_cache=caches_addresses(cluster.software.slurm), tree_width=spec.resolved_tree_width(),
        slurmctld_parameters=("idle_on_node_suspend", *(["cloud_dns"] if spec.cloud_dns else [])),
        private_data=private if "cloud" in private else (*private, "cloud"))
