"""The SLURM model: NodeName sets with GRES from the catalog, partitions, the controller, topology switches."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Server
from clusterforge.core.hostlist import compress
from clusterforge.model import Cluster, SwitchedFabric
from clusterforge.plan.compact import Upper, compact
from clusterforge.plan.model import (
    PoolNodes,
    SlurmBlock,
    SlurmNodes,
    SlurmPartition,
    SlurmPlan,
    SlurmSwitch,
    Topology,
)
from clusterforge.plan.topology import switch_names


def gres_type(model: str) -> str:
    """GRES type from the catalog's GPU model: the family before the first dash, lowercase (H100-SXM5 → h100)."""
    return model.split("-", 1)[0].lower()


def controllers(pools: tuple[PoolNodes, ...]) -> tuple[tuple[str, ...], str]:
    """(SlurmctldHost lines, why). Every node of the first controller pool, the first the primary and the others
    its backups (two is HA). Without a controller pool the first login node, else the first compute node, runs
    slurmctld: a small cluster works at once, and adding a `role: controller` pool moves it."""
    for role, reason in (("controller", "the controller pool"),
                         ("login", "no controller pool: the first login node"),
                         ("compute", "no controller or login pool: the first compute node")):
        pool = next((p for p in pools if p.role == role), None)
        if pool is not None:
            if role == "controller":
                hosts = tuple(pool.names())
                return hosts, reason + (f", {len(hosts)} nodes: the first primary, then backups" if len(hosts) > 1
                                        else ": its first node")
            return (pool.name(1),), reason
    return (), "no controller, login or compute pool"


def dbd_host(cluster: Cluster, pools: tuple[PoolNodes, ...], hosts: tuple[str, ...]) -> str | None:
    """Where slurmdbd runs: the first node of `slurm.accounting.pool`, else the primary controller."""
    accounting = cluster.slurm.accounting
    if not accounting.enabled:
        return None
    pool = next((p for p in pools if p.pool == accounting.pool), None)
    return pool.name(1) if pool is not None else (hosts[0] if hosts else None)


def partitions(cluster: Cluster, pools: tuple[PoolNodes, ...]) -> tuple[SlurmPartition, ...]:
    """The blueprint's partitions, each with its listed pools plus the pools that name it; without a
    `slurm.partitions` list, one partition per distinct `pool.partition`, the first one default."""
    by_name = {p.pool: p for p in pools if p.role == "compute"}
    declared = cluster.slurm.partitions
    names = [p.name for p in declared] or list(dict.fromkeys(p.partition for p in cluster.pools if p.partition))
    out = []
    for index, name in enumerate(names):
        spec = next((p for p in declared if p.name == name), None)
        listed = list(spec.pools) if spec else []
        members = [m for m in dict.fromkeys(listed + [p.name for p in cluster.pools if p.partition == name])
                   if m in by_name]
        out.append(SlurmPartition(
            name=name, pools=tuple(members), nodes=",".join(by_name[m].hostlist for m in members),
            default=spec.default if spec else index == 0, max_time=spec.max_time if spec else "UNLIMITED"))
    return tuple(out)


def leaf_groups(topology: Topology, rail_optimized: bool) -> dict[str, tuple[tuple[str, ...], list[str]]]:
    """SLURM's leaf level: name -> (physical leaves, nodes). topology/tree wants each node under one leaf
    (slurmctld warns "Multiple leaf switches contain nodes" otherwise), so on a rail-optimized fabric the
    rail group, the nodes that share one set of rail leaves, is the leaf (`su-001`); elsewhere a node
    belongs to the leaf of its first NIC."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for node, rails in topology.rails.items():
        key = tuple(dict.fromkeys(rails)) if rail_optimized else rails[:1]
        groups.setdefault(key, []).append(node)
    if not rail_optimized:
        return {leaves[0]: (leaves, nodes) for leaves, nodes in groups.items()}
    names = switch_names("su", len(groups))
    return {name: item for name, item in zip(names, groups.items(), strict=True)}


def full_tree(topology: Topology, rail_optimized: bool) -> tuple[list[SlurmSwitch], list[Upper]]:
    """SLURM's leaf level, and every spine and core as wired with the switches right below it (a spine's
    leaves replaced by their leaf-level switches). `switches` compacts it; tests hold the two equal."""
    groups = leaf_groups(topology, rail_optimized)
    level0 = [SlurmSwitch(name, nodes=compress(nodes), leaves=compress(leaves) if rail_optimized else "")
              for name, (leaves, nodes) in groups.items()]
    known: dict[str, list[str]] = {}  # a switch of the wiring -> the switches SLURM knows it by
    for name, (leaves, _) in groups.items():
        for leaf in leaves:  # a leaf two rail groups share (pools of different NIC counts) stands for both
            known.setdefault(leaf, []).append(name)
    upper: list[Upper] = []
    for switch in topology.switches:  # leaves, then spines, then cores: children come first
        if switch.tier == "leaf":
            continue
        children = tuple(dict.fromkeys(k for c in switch.children for k in known.get(c, ())))
        if children:  # a spine above only leaves that hold no node's first NIC has nothing for SLURM
            upper.append(Upper(switch.name, switch.tier, children))
            known[switch.name] = [switch.name]
    return level0, upper


def full_switches(topology: Topology | None, rail_optimized: bool) -> tuple[SlurmSwitch, ...]:
    """topology.conf lines for the full tree, every spine and core on its own: what render wrote before the
    tree was compacted, kept for the equivalence tests and benchmarks/slurmctld_start.py."""
    if topology is None:
        return ()
    level0, upper = full_tree(topology, rail_optimized)
    return (*level0, *(SlurmSwitch(s.name, switches=compress(s.children)) for s in upper))


def switches(topology: Topology | None, rail_optimized: bool) -> tuple[SlurmSwitch, ...]:
    """topology.conf lines: the leaf level, then one switch per class of equivalent spines or cores
    (plan/compact.py), each naming the switches it stands for."""
    if topology is None:
        return ()
    level0, upper = full_tree(topology, rail_optimized)
    merged = compact([s.name for s in level0], upper)
    return (*level0, *(SlurmSwitch(m.name, switches=compress(m.children), members=compress(m.members))
                       for m in merged))


def blocks(pools: tuple[PoolNodes, ...]) -> tuple[tuple[SlurmBlock, ...], tuple[int, ...]]:
    """topology/block's blocks and BlockSizes when every compute pool is made of NVLink domains (NVL72 racks).

    NVIDIA's guidance is one block per NVLink domain, a hard boundary for jobs that need the NVLink fabric
    (developer.nvidia.com, "GB200 NVL72 with Slurm block scheduling"). SLURM 24.11 takes one topology plugin, so
    a cluster that mixes rack-scale and server pools keeps topology/tree (the fabric) and no blocks. BlockSizes
    starts at the domain size and doubles while that many domains exist (18, 36, 72 for four racks): each size
    must be a power of two times the first (topology.conf(5))."""
    compute = [p for p in pools if p.role == "compute"]
    if not compute or any(p.domain_size <= 1 for p in compute):
        return (), ()
    out = []
    for pool in compute:
        out += [SlurmBlock(name, compress(nodes)) for name, nodes in pool.domains]
    base = min(p.domain_size for p in compute)
    total = sum(p.count for p in compute)
    sizes = [base]
    while sizes[-1] * 2 <= total:
        sizes.append(sizes[-1] * 2)
    return tuple(out), tuple(sizes)


MEMORY_FOR_JOBS = 0.95  # RealMemory above what slurmd finds drains the node: leave the OS its share


def node_line(pool: PoolNodes, catalog: Catalog) -> SlurmNodes:
    """A pool's NodeName entry: GRES from the GPUs, sockets/cores/threads and memory from the catalog."""
    entry = catalog.get(pool.hardware)
    cpus = entry.node_cpus if isinstance(entry, Server) else getattr(entry, "cpus", None)
    memory = entry.node_memory_gib if isinstance(entry, Server) else getattr(entry, "memory_gib", None)
    return SlurmNodes(pool.pool, pool.hostlist, gres_type(pool.gpu_model) if pool.gpu_model else None,
                      pool.gpu_count, cpus.sockets if cpus else None, cpus.cores_per_socket if cpus else None,
                      cpus.threads_per_core if cpus else None,
                      int(memory * 1024 * MEMORY_FOR_JOBS) if memory else None)


def slurm_plan(
    cluster: Cluster, catalog: Catalog, pools: tuple[PoolNodes, ...], topology: Topology | None
) -> SlurmPlan:
    hosts, reason = controllers(pools)
    fabric = cluster.fabric
    rail_optimized = isinstance(fabric, SwitchedFabric) and fabric.rail_optimized
    nodes = tuple(node_line(p, catalog) for p in pools if p.role == "compute")
    domains, sizes = blocks(pools)
    return SlurmPlan(cluster.slurm.cluster_name or cluster.name, hosts[0] if hosts else None, reason, nodes,
                     partitions(cluster, pools), () if domains else switches(topology, rail_optimized), hosts,
                     dbd_host(cluster, pools, hosts), domains, sizes)
