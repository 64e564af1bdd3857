"""gres.conf: the GPU device files of every GPU pool (`File=` explicit, so no NVML build is needed); values pass
`RenderContext.conf` like slurm.conf's."""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.slurm_conf import gpu_type, pool_path


def device_files(count: int) -> str:
    """`/dev/nvidia[0-7]` for eight GPUs, `/dev/nvidia0` for one."""
    return "/dev/nvidia0" if count == 1 else f"/dev/nvidia[0-{count - 1}]"


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    assert slurm is not None
    lines = [f"NodeName={ctx.conf(n.hostlist, pool_path(ctx, n.pool, 'name'))} Name=gpu Type={gpu_type(ctx, n)} "
             f"File={device_files(n.gpu_count)}" for n in slurm.nodes if n.gres]
    if not lines:
        return {}
    return {"slurm/gres.conf": ctx.header() + conf_lines(lines)}
