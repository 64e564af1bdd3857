"""cgroup.conf: confine jobs to their cores and GPUs (ConstrainDevices is what isolates GPUs between jobs), with
the blueprint's `slurm.cgroup_settings` merged over it."""

from __future__ import annotations

from clusterforge.render.conf_settings import Pairs, lines, merge
from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.manifest import RoleHandlers
from clusterforge.render.slurm_conf import memory_known

# What changing it takes on day two (clusterforge.render.manifest): what the slurm role's handlers for it do.
DAY_TWO = {"slurm/cgroup.conf": RoleHandlers()}

_SETTINGS: Pairs = [("CgroupPlugin", "autodetect"), ("ConstrainCores", "yes"), ("ConstrainDevices", "yes")]


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    # RAM is confined only when every node's memory is known (as SelectTypeParameters in slurm.conf)
    memory = slurm is not None and memory_known(slurm)
    pairs = [*_SETTINGS, ("ConstrainRAMSpace", "yes" if memory else "no")]
    merged = merge(ctx, pairs, ctx.loaded.cluster.slurm.cgroup_settings, "cgroup_settings", conf=False)
    return {"slurm/cgroup.conf": ctx.header() + conf_lines(lines(merged))}
