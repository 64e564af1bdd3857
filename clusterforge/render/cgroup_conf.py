"""cgroup.conf: confine jobs to their cores and GPUs (ConstrainDevices is what isolates GPUs between jobs)."""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines

# ConstrainRAMSpace stays off until node memory is known (see SelectTypeParameters in slurm.conf).
_SETTINGS = ["CgroupPlugin=autodetect", "ConstrainCores=yes", "ConstrainDevices=yes", "ConstrainRAMSpace=no"]


def render(ctx: RenderContext) -> dict[str, str]:
    return {"slurm/cgroup.conf": ctx.header() + conf_lines(_SETTINGS)}
