"""The SLURM model: NodeName sets with GRES from the catalog, partitions, the controller, topology switches."""

from __future__ import annotations

from clusterforge.hostlist import compress
from clusterforge.model import Cluster
from clusterforge.plan.model import PoolNodes, SlurmNodes, SlurmPartition, SlurmPlan, SlurmSwitch, Topology


def gres_type(model: str) -> str:
    """GRES type from the catalog's GPU model: the family before the first dash, lowercase (H100-SXM5 → h100)."""
    return model.split("-", 1)[0].lower()


def controller(pools: tuple[PoolNodes, ...]) -> tuple[str | None, str]:
    """(SlurmctldHost, why). Without a controller pool the first login node, else the first compute node, runs
    slurmctld: a small cluster works at once, and adding a `role: controller` pool moves it."""
    for role, reason in (("controller", "first node of the controller pool"),
                         ("login", "no controller pool: the first login node"),
                         ("compute", "no controller or login pool: the first compute node")):
        pool = next((p for p in pools if p.role == role), None)
        if pool is not None:
            return pool.name(1), reason
    return None, "no controller, login or compute pool"


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


def switches(topology: Topology | None) -> tuple[SlurmSwitch, ...]:
    if topology is None:
        return ()
    return tuple(SlurmSwitch(s.name, nodes=compress(s.nodes), switches=compress(s.children))
                 for s in topology.switches)


def slurm_plan(cluster: Cluster, pools: tuple[PoolNodes, ...], topology: Topology | None) -> SlurmPlan:
    host, reason = controller(pools)
    nodes = tuple(SlurmNodes(p.pool, p.hostlist, gres_type(p.gpu_model) if p.gpu_model else None, p.gpu_count)
                  for p in pools if p.role == "compute")
    return SlurmPlan(cluster.slurm.cluster_name or cluster.name, host, reason, nodes,
                     partitions(cluster, pools), switches(topology))
