"""cgroup.conf: confine jobs to their cores and GPUs (ConstrainDevices is what isolates GPUs between jobs)."""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.slurm_conf import memory_known

_SETTINGS = ["CgroupPlugin=autodetect", "ConstrainCores=yes", "ConstrainDevices=yes"]


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    # RAM is confined only when every node's memory is known (as SelectTypeParameters in slurm.conf)
    memory = slurm is not None and memory_known(slurm)
    lines = [*_SETTINGS, f"ConstrainRAMSpace={'yes' if memory else 'no'}"]
    return {"slurm/cgroup.conf": ctx.header() + conf_lines(lines)}
