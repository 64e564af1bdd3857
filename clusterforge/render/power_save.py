"""slurm.conf's power-save lines, as the plan decided them (plan/power_save.py: which nodes slurmctld powers up on
demand and down when idle, which it never powers down), and the programs it runs to do so (`clusterforge-resume`,
`clusterforge-suspend`: pyproject's [project.scripts], clusterforge/powersave).

Written only when the programs launch some pool's nodes: a cluster without one renders exactly as before.
"""

from __future__ import annotations

from clusterforge.core.errors import ClusterforgeError
from clusterforge.plan.model import PowerSavePlan
from clusterforge.render.context import RenderContext

# Where the slurm role puts the power-save console scripts on the controllers (beside the health and reboot
# programs); slurmctld runs them as SlurmUser with a hostlist argument.
RESUME_PROGRAM = "/usr/local/sbin/clusterforge-resume"
SUSPEND_PROGRAM = "/usr/local/sbin/clusterforge-suspend"

Pairs = list[tuple[str, str]]


def plan_of(ctx: RenderContext) -> PowerSavePlan:
    """The plan's power saving (a render's plan is a whole one: it has it)."""
    power = ctx.plan.power_save
    assert power is not None
    return power


def refuse_idle_controller(ctx: RenderContext, power: PowerSavePlan) -> None:
    """Refuse a slurmctld host that slurmctld could power down (the plan found one)."""
    if power.idle_controller is not None:
        index, host = power.idle_controller
        pool = ctx.loaded.cluster.pools[index]
        raise ClusterforgeError(ctx.loaded.source.problem(
            ("pools", index, "count"), f"slurmctld would run on {host}, a node of pool {pool.name} that is powered "
            "down when idle", "add a pool with role controller (or login), or give the pool count ≥ 1 so its first "
            "node stays on"))


def pairs(ctx: RenderContext) -> Pairs:
    """The power-save lines (none when the programs launch no pool). ResumeTimeout is written with the recovery
    settings (slurm.recovery.resume_timeout_s, whose default follows power saving)."""
    power = plan_of(ctx)
    spec = ctx.loaded.cluster.slurm.power_save
    wan = [] if power.tcp_timeout_s is None else [("TCPTimeout", str(power.tcp_timeout_s))]
    width = [] if power.tree_width is None else [("TreeWidth", str(power.tree_width))]
    if not power.launched:
        return wan + width
    refuse_idle_controller(ctx, power)
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
    if power.no_addr_cache:
        # addresses change with every launch: look a node's address up on each connection (scale.md)
        out.append(("CommunicationParameters", "NoAddrCache"))
    out += wan + width
    nodes = [ctx.conf(part, ("pools", index, "count")) for index, part in power.excluded_nodes]
    if nodes:
        out.append(("SuspendExcNodes", ",".join(nodes)))
    if power.excluded_partitions:
        out.append(("SuspendExcParts", ",".join(ctx.conf(p, ("slurm", "partitions"))
                                                for p in power.excluded_partitions)))
    return out
