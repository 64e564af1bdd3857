"""slurm.conf: cluster settings, one NodeName line per pool (hostlist ranges), and the partitions."""

from __future__ import annotations

from clusterforge.plan.model import SlurmPlan
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


def settings(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    lines = [f"ClusterName={slurm.cluster_name}"]
    if slurm.controller:
        lines.append(f"SlurmctldHost={slurm.controller}")
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


def node_lines(slurm: SlurmPlan) -> list[str]:
    return [f"NodeName={n.hostlist}{n.hardware_fields}" + (f" Gres={n.gres}" if n.gres else "") + " State=UNKNOWN"
            for n in slurm.nodes]


def partition_lines(slurm: SlurmPlan) -> list[str]:
    out = []
    for part in slurm.partitions:
        fields = [f"PartitionName={part.name}"]
        if part.nodes:
            fields.append(f"Nodes={part.nodes}")
        if part.default:
            fields.append("Default=YES")
        fields += [f"MaxTime={part.max_time}", "State=UP"]
        out.append(" ".join(fields))
    return out


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    assert slurm is not None
    note = [] if memory_known(slurm) else ["# RealMemory is left out where the catalog has no memory figure"]
    body = [*settings(ctx, slurm), "", *note, *node_lines(slurm), "", *partition_lines(slurm)]
    return {"slurm/slurm.conf": ctx.header() + conf_lines(body)}
