"""slurm.conf: cluster settings, one NodeName line per pool (hostlist ranges), and the partitions.

Every value that did not come from this module passes `RenderContext.conf`, which refuses what would break a
line or a `key=value` pair.
"""

from __future__ import annotations

from clusterforge.plan.model import SlurmNodes, SlurmPlan
from clusterforge.render.context import RenderContext, conf_lines

STATE_SAVE_LOCATION = "/var/spool/slurmctld"
HEALTH_CHECK_PROGRAM = "/usr/local/sbin/clusterforge-health"  # health_script in roles/health/defaults/main.yml

# Settings every clusterforge cluster gets: cgroup process tracking and task containment (GPU isolation
# through ConstrainDevices), consumable trackable resources for GRES, unlimited locked memory for RDMA.
_FIXED = [
    ("AuthType", "auth/munge"),
    ("SlurmUser", "slurm"),
    ("SlurmctldPort", "6817"),
    ("SlurmdPort", "6818"),
    ("StateSaveLocation", STATE_SAVE_LOCATION),
    ("SlurmdSpoolDir", "/var/spool/slurmd"),
    ("SlurmctldPidFile", "/run/slurmctld.pid"),
    ("SlurmdPidFile", "/run/slurmd.pid"),
    ("SlurmctldLogFile", "/var/log/slurm/slurmctld.log"),
    ("SlurmdLogFile", "/var/log/slurm/slurmd.log"),
    ("ProctrackType", "proctrack/cgroup"),
    ("TaskPlugin", "task/cgroup,task/affinity"),
    ("JobAcctGatherType", "jobacct_gather/cgroup"),
    ("SelectType", "select/cons_tres"),
    ("SchedulerType", "sched/backfill"),
    ("MpiDefault", "none"),
    ("ReturnToService", "1"),
    ("PropagateResourceLimitsExcept", "MEMLOCK"),
    # The health role's script (roles/health): checks GPUs, driver, NCCL and fabric, drains a failing node
    # with the reason and resumes the nodes it drained once they pass.
    ("HealthCheckProgram", HEALTH_CHECK_PROGRAM),
    ("HealthCheckInterval", "300"),
    ("HealthCheckNodeState", "ANY,CYCLE"),
]


def pool_path(ctx: RenderContext, pool: str, *rest: str) -> tuple[str | int, ...]:
    """The blueprint path of a pool's field (`pools[2].hardware`)."""
    index = next((i for i, p in enumerate(ctx.loaded.cluster.pools) if p.name == pool), None)
    return ("pools",) if index is None else ("pools", index, *rest)


def partition_path(ctx: RenderContext, name: str, field: str) -> tuple[str | int, ...]:
    index = next((i for i, p in enumerate(ctx.loaded.cluster.slurm.partitions) if p.name == name), None)
    return ("slurm", "partitions") if index is None else ("slurm", "partitions", index, field)


def gpu_type(ctx: RenderContext, node: SlurmNodes) -> str:
    """The GRES type (from the catalog's GPU model), refused when it would break a line."""
    hardware = next((p.hardware for p in ctx.loaded.cluster.pools if p.name == node.pool), "?")
    return ctx.conf(node.gpu_type, f"catalog {hardware}: gpus.model (pool {node.pool})")


def settings(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    name_path = ("slurm", "cluster_name") if ctx.loaded.cluster.slurm.cluster_name else ("name",)
    lines = [f"ClusterName={ctx.conf(slurm.cluster_name, name_path)}"]
    if slurm.controller:
        lines.append(f"SlurmctldHost={ctx.conf(slurm.controller, ('pools',))}")
    lines += [f"{key}={value}" for key, value in _FIXED]
    # memory is a consumable only when every node's RealMemory is known; otherwise it would default to 1 MB
    lines.append(f"SelectTypeParameters={'CR_Core_Memory' if memory_known(slurm) else 'CR_Core'}")
    if any(n.gres for n in slurm.nodes):
        lines.append("GresTypes=gpu")
    if slurm.switches:
        lines.append("TopologyPlugin=topology/tree")
    timeout = ctx.loaded.cluster.slurm.slurmd_timeout_s
    if timeout is not None:
        lines.append(f"SlurmdTimeout={timeout}")
    private = ctx.loaded.cluster.slurm.private_data
    if private:
        lines.append(f"PrivateData={','.join(private)}")
    return lines


def memory_known(slurm: SlurmPlan) -> bool:
    return bool(slurm.nodes) and all(n.real_memory_mib for n in slurm.nodes)


def node_lines(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    out = []
    for n in slurm.nodes:
        line = f"NodeName={ctx.conf(n.hostlist, pool_path(ctx, n.pool, 'name'))}{n.hardware_fields}"
        if n.gres:
            line += f" Gres=gpu:{gpu_type(ctx, n)}:{n.gpu_count}"
        out.append(line + " State=UNKNOWN")
    return out


def partition_lines(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    out = []
    for part in slurm.partitions:
        fields = [f"PartitionName={ctx.conf(part.name, partition_path(ctx, part.name, 'name'))}"]
        if part.nodes:
            fields.append(f"Nodes={ctx.conf(part.nodes, partition_path(ctx, part.name, 'pools'))}")
        if part.default:
            fields.append("Default=YES")
        fields += [f"MaxTime={ctx.conf(part.max_time, partition_path(ctx, part.name, 'max_time'))}", "State=UP"]
        out.append(" ".join(fields))
    return out


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    assert slurm is not None
    note = [] if memory_known(slurm) else ["# RealMemory is left out where the catalog has no memory figure"]
    body = [*settings(ctx, slurm), "", *note, *node_lines(ctx, slurm), "", *partition_lines(ctx, slurm)]
    return {"slurm/slurm.conf": ctx.header() + conf_lines(body)}
