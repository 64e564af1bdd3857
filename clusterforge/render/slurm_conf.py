"""slurm.conf: cluster settings, one NodeName line per pool (hostlist ranges), and the partitions.

The settings follow the measured SLURM 24.11 recipe (../shared/reference/slurm-production.md, sections 2 and 11):
each line is there because a daemon works, or logs no error, with it. The blueprint's `slurm.settings` is merged
over them last (render/conf_settings.py). Every value that did not come from this module passes
`RenderContext.conf`, which refuses what would break a line or a `key=value` pair.
"""

from __future__ import annotations

from clusterforge.model import Cluster
from clusterforge.model.slurm import STATE_SAVE_LOCATION as STATE_SAVE_LOCATION  # the default (lab/nodes.py)
from clusterforge.model.slurm import Slurm
from clusterforge.plan.model import SlurmNodes, SlurmPlan
from clusterforge.render.conf_settings import Pairs, lines, merge
from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.manifest import ByKey
from clusterforge.render.power_save import pairs as power_save_pairs
from clusterforge.render.power_save import plan_of

# What changing it takes on day two (clusterforge.render.manifest): each key as slurm.conf(5) classes it.
DAY_TWO = {"slurm/slurm.conf": ByKey("slurm.conf")}

HEALTH_CHECK_PROGRAM = "/usr/local/sbin/clusterforge-health"  # health_script in roles/health/defaults/main.yml
REBOOT_PROGRAM = "/usr/local/sbin/clusterforge-reboot"  # health_reboot_program in roles/health/defaults/main.yml
PROLOG_DIR = "/etc/slurm/prolog.d"  # the slurm role creates both; every executable file in them runs
EPILOG_DIR = "/etc/slurm/epilog.d"

# Settings every clusterforge cluster gets: cgroup process tracking and task containment (GPU isolation
# through ConstrainDevices), consumable trackable resources for GRES, unlimited locked memory for RDMA.
# The pid files sit in the directories Debian's units create (RuntimeDirectory=slurmctld, slurm); MailProg is a
# program that exists (Debian's default, /bin/mail, is not installed: "Configured MailProg is invalid").
_FIXED = [
    ("AuthType", "auth/munge"),
    ("SlurmUser", "slurm"),
    ("SlurmctldPort", "6817"),
    ("SlurmdPort", "6818"),
    ("SlurmdSpoolDir", "/var/spool/slurmd"),
    ("SlurmctldPidFile", "/run/slurmctld/slurmctld.pid"),
    ("SlurmdPidFile", "/run/slurm/slurmd.pid"),
    ("SlurmctldLogFile", "/var/log/slurm/slurmctld.log"),
    ("SlurmdLogFile", "/var/log/slurm/slurmd.log"),
    ("MailProg", "/bin/true"),
    ("ProctrackType", "proctrack/cgroup"),
    ("TaskPlugin", "task/cgroup,task/affinity"),
    ("SelectType", "select/cons_tres"),
    ("SchedulerType", "sched/backfill"),
    ("PropagateResourceLimitsExcept", "MEMLOCK"),
    # The health role's script (roles/health): checks GPUs, driver, Xids, ECC, fabric and mounts, drains a failing
    # node with a reason code and resumes the nodes it drained once they pass. CYCLE spreads the runs over the
    # interval instead of checking every node at once.
    ("HealthCheckProgram", HEALTH_CHECK_PROGRAM),
    ("HealthCheckNodeState", "ANY,CYCLE"),
    # `scontrol reboot` (the remediation role's, or an operator's) runs this on the node
    ("RebootProgram", REBOOT_PROGRAM),
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


def preempts(spec: Slurm) -> bool:
    """QOS preemption is on: some QOS preempts another, with accounting (QOS live in slurmdbd) and a mode."""
    return spec.accounting.enabled and spec.preempt_mode != "off" and any(q.preempt for q in spec.qos)


def accounting(ctx: RenderContext, slurm: SlurmPlan) -> Pairs:
    """slurmdbd, job accounting and multifactor priority, or none of them: slurmctld logs an error for gathered
    accounting it cannot store, and for fair-share and age weights without slurmdbd."""
    spec = ctx.loaded.cluster.slurm
    if not spec.accounting.enabled or slurm.dbd_host is None:
        return [("AccountingStorageType", "accounting_storage/none"), ("JobAcctGatherType", "jobacct_gather/none")]
    pairs = [("AccountingStorageType", "accounting_storage/slurmdbd"),
             ("AccountingStorageHost", ctx.conf(slurm.dbd_host, ("slurm", "accounting")))]
    if spec.accounts:  # enforcing associations refuses every job of a user no account lists
        pairs.append(("AccountingStorageEnforce", "associations,limits,qos"))
    weights = spec.priority_weights
    pairs += [("JobAcctGatherType", "jobacct_gather/cgroup"), ("PriorityType", "priority/multifactor"),
              ("PriorityWeightFairshare", str(weights.fairshare)), ("PriorityWeightQOS", str(weights.qos)),
              ("PriorityWeightAge", str(weights.age)), ("PriorityWeightJobSize", str(weights.job_size)),
              ("PriorityWeightPartition", str(weights.partition))]
    if preempts(spec):
        pairs += [("PreemptType", "preempt/qos"), ("PreemptMode", spec.preempt_mode.upper())]
    return pairs


def prolog_epilog(cluster: Cluster) -> bool:
    """Prolog and Epilog run the scripts in prolog.d and epilog.d: the blueprint's own, or the health check's."""
    health = cluster.operations.health
    return cluster.slurm.prolog_epilog or health.prolog or health.epilog


def recovery(ctx: RenderContext) -> Pairs:
    """How a job survives its node: requeue, how soon it may start again (cred_expire) and be picked up
    (sched_interval), a failing prolog requeues the job unheld, and how long a rebooted node may take."""
    cluster = ctx.loaded.cluster
    spec = cluster.slurm.recovery
    pairs: Pairs = [
        ("JobRequeue", "1" if spec.job_requeue else "0"),
        ("ReturnToService", str(spec.return_to_service)),
        ("AuthInfo", f"cred_expire={spec.cred_expire_s}"),
        ("SchedulerParameters", f"nohold_on_prolog_fail,sched_interval={spec.sched_interval_s}"),
        ("ResumeTimeout", str(spec.resume_timeout(bool(plan_of(ctx).launched)))),
        ("HealthCheckInterval", str(cluster.operations.health.interval_s)),
    ]
    if spec.requeue_exit:
        pairs.append(("RequeueExit", ",".join(str(code) for code in spec.requeue_exit)))
    if spec.requeue_exit_hold:
        pairs.append(("RequeueExitHold", ",".join(str(code) for code in spec.requeue_exit_hold)))
    return pairs


def jobs(ctx: RenderContext) -> Pairs:
    """MPI, prolog and epilog, and job containment (pam_slurm_adopt and job_container/tmpfs need the extern step
    that PrologFlags=Contain creates)."""
    spec = ctx.loaded.cluster.slurm
    pairs: Pairs = [("MpiDefault", spec.mpi)]
    if prolog_epilog(ctx.loaded.cluster):
        pairs += [("Prolog", f"{PROLOG_DIR}/*"), ("Epilog", f"{EPILOG_DIR}/*")]
    if spec.pam_slurm_adopt or spec.job_container_tmpfs is not None:
        pairs.append(("PrologFlags", "Contain"))
    if spec.job_container_tmpfs is not None:
        pairs.append(("JobContainerType", "job_container/tmpfs"))
    return pairs


def settings(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    spec = ctx.loaded.cluster.slurm
    name_path = ("slurm", "cluster_name") if spec.cluster_name else ("name",)
    pairs: Pairs = [("ClusterName", ctx.conf(slurm.cluster_name, name_path))]
    hosts = slurm.controllers or ((slurm.controller,) if slurm.controller else ())
    pairs += [("SlurmctldHost", ctx.conf(host, ("pools",))) for host in hosts]
    pairs.append(("StateSaveLocation", ctx.conf(spec.state_save_location, ("slurm", "state_save_location"))))
    options = ["enable_configless"] if spec.configless else []
    options += plan_of(ctx).slurmctld_parameters
    if options:
        pairs.append(("SlurmctldParameters", ",".join(options)))
    pairs += _FIXED
    pairs += recovery(ctx)
    pairs += accounting(ctx, slurm)
    pairs += jobs(ctx)
    # memory is a consumable only when every node's RealMemory is known; otherwise it would default to 1 MB
    pairs.append(("SelectTypeParameters", "CR_Core_Memory" if memory_known(slurm) else "CR_Core"))
    if any(n.gres for n in slurm.nodes):
        pairs.append(("GresTypes", "gpu"))
    if slurm.topology_plugin:
        pairs.append(("TopologyPlugin", slurm.topology_plugin))
    if spec.slurmd_timeout_s is not None:
        pairs.append(("SlurmdTimeout", str(spec.slurmd_timeout_s)))
    private = plan_of(ctx).private_data
    if private:
        pairs.append(("PrivateData", ",".join(private)))
    pairs += power_save_pairs(ctx)
    return lines(merge(ctx, pairs, spec.settings, "settings"))


def memory_known(slurm: SlurmPlan) -> bool:
    return bool(slurm.nodes) and all(n.real_memory_mib for n in slurm.nodes)


def node_lines(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    """One NodeName line per compute pool; the nodes of a pool the power-save programs launch are `State=CLOUD`
    (powered down until slurmctld or the reconcile timer powers them up: plan/power_save.py)."""
    out = []
    launched = plan_of(ctx).launched
    for n in slurm.nodes:
        line = f"NodeName={ctx.conf(n.hostlist, pool_path(ctx, n.pool, 'name'))}{n.hardware_fields}"
        if n.gres:
            line += f" Gres=gpu:{gpu_type(ctx, n)}:{n.gpu_count}"
        out.append(line + (" State=CLOUD" if n.pool in launched else " State=UNKNOWN"))
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
