"""Wiring the fat tree: the leaf each node's NIC plugs into, and which switches sit above which.

Rail-optimized (DGX SuperPOD): nodes form groups of as many nodes as a leaf has downlinks (32 at radix 64,
one scalable unit); NIC i of every node in a group lands on the group's rail-i leaf. When a group is not full,
rails share a leaf (16 nodes × 8 rails fill 4 leaves), so the leaf count stays ⌈endpoints / downlinks⌉ as
sized. Otherwise a node's NICs go to consecutive ports. Two tiers: every spine reaches every leaf. Three
tiers: pods of as many leaves as a spine has downlinks (k/2 at 1:1) with their own spines; core j serves the
spines at one position of every pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog import Entry, Instance, Server
from clusterforge.model import Pool
from clusterforge.plan.model import FabricSwitch, FatTree, PoolNodes, Topology

MIN_SWITCH_WIDTH = 3


def fabric_nics(pool: Pool, entry: Entry) -> int:
    """Compute-fabric NICs of one node (a tray of a rack-scale system): GPU servers in compute pools have one
    per rail; others none."""
    if isinstance(entry, Server) and entry.node_gpus and entry.node_nics and pool.role == "compute":
        return entry.node_nics.compute
    return 0


def fabric_nic_gbps(pool: Pool, entry: Entry) -> int:
    """The speed of each of those NICs, 0 where the node has none."""
    if fabric_nics(pool, entry) and isinstance(entry, Server) and entry.node_nics:
        return entry.node_nics.speed_gbps
    return 0


def hosts_per_device(entry: Entry) -> int:
    """Nodes one device of this entry holds (18 trays of an NVL72 rack, the instances of a cloud's rack-scale
    device), else 1. Those nodes are one NVLink domain."""
    return entry.hosts_per_device if isinstance(entry, Server | Instance) else 1


def switch_names(tier: str, count: int) -> list[str]:
    width = max(MIN_SWITCH_WIDTH, len(str(count)))
    return [f"{tier}-{i:0{width}d}" for i in range(1, count + 1)]


def _endpoints(nodes: list[tuple[str, int]], group: int, rail_optimized: bool) -> Iterator[tuple[str, int]]:
    """(hostname, NIC) in cabling order: by group, then rail, then node when rail-optimized."""
    if not rail_optimized:
        for name, nics in nodes:
            for nic in range(nics):
                yield name, nic
        return
    for start in range(0, len(nodes), group):
        members = nodes[start:start + group]
        for rail in range(max(nics for _, nics in members)):
            for name, nics in members:
                if rail < nics:
                    yield name, rail


def _upper_tiers(fabric: FatTree, leaves: list[str]) -> list[FabricSwitch]:
    spines = switch_names("spine", fabric.spines)
    if fabric.tiers == 2:
        return [FabricSwitch(name, "spine", children=tuple(leaves)) for name in spines]
    pod_leaves = fabric.spine_downlinks  # k/2 at 1:1; more when the spines are oversubscribed
    per_pod = fabric.leaf_uplinks  # spines in a full pod: one per leaf uplink
    out = [FabricSwitch(name, "spine", children=tuple(leaves[(s // per_pod) * pod_leaves:
                                                             (s // per_pod + 1) * pod_leaves]))
           for s, name in enumerate(spines)]
    cores = switch_names("core", fabric.cores)
    for c, name in enumerate(cores):
        # the spines at one position (plane) of every pod; with fewer cores than planes, every len(cores)-th
        planes = [c % per_pod] if len(cores) >= per_pod else range(c, per_pod, len(cores))
        members = sorted(i for plane in planes for i in range(plane, len(spines), per_pod))
        out.append(FabricSwitch(name, "core", children=tuple(spines[i] for i in members)))
    return out


def wire(fabric: FatTree, pools: tuple[PoolNodes, ...], rail_optimized: bool) -> Topology:
    """Every switch with what hangs below it, and each fabric node's leaf per rail."""
    nodes = [(name, pool.fabric_nics) for pool in pools if pool.fabric_nics for name in pool.names()]
    leaves = switch_names("leaf", fabric.leaves)
    down = fabric.leaf_downlinks
    below: list[dict[str, None]] = [{} for _ in leaves]
    rails = {name: [""] * nics for name, nics in nodes}
    for k, (name, nic) in enumerate(_endpoints(nodes, down, rail_optimized)):
        leaf = min(k // down, len(leaves) - 1)  # a fabric forced below its needed tiers overloads the last leaf
        below[leaf][name] = None
        rails[name][nic] = leaves[leaf]
    switches = [FabricSwitch(name, "leaf", nodes=tuple(hosts)) for name, hosts in zip(leaves, below, strict=True)]
    if fabric.tiers >= 2:
        switches += _upper_tiers(fabric, leaves)
    return Topology(tuple(switches), {name: tuple(r) for name, r in rails.items()})
