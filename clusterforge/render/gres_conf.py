"""gres.conf: the device files of every GPU pool, by the vendor of its GPUs (`File=` explicit, so no NVML, ROCm SMI
or Neuron runtime library is needed at slurmd's build or start); values pass `RenderContext.conf` like slurm.conf's.

Each vendor's kernel driver names its devices differently (Slurm's gpu plugins, `src/plugins/gpu/*`): the vendor's
entry in clusterforge/accelerators declares its device files and any `Flags=` (NVIDIA `/dev/nvidia<i>`, AMD the DRM
render nodes `/dev/dri/renderD<minor>` from 128 with `Flags=amd_gpu_env`, Trainium `/dev/neuron<i>`).

AutoDetect is not written: gres.conf(5) says "AutoDetect cannot be used with cloud nodes", so the AWS target needs
the explicit files, and the same explicit form everywhere keeps one renderer and no library at build time. Where a
vendor's device numbers vary per host (AMD's render minors), `AutoDetect` on one node lists the real files.
"""

from __future__ import annotations

from clusterforge.accelerator_kernel import accelerator
from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.manifest import RoleHandlers
from clusterforge.render.slurm_conf import gpu_type, pool_path

# What changing it takes on day two (clusterforge.render.manifest): what the slurm role's handlers for it do.
DAY_TWO = {"slurm/gres.conf": RoleHandlers()}


def device_files(count: int, vendor: str | None = None) -> str:
    """`/dev/nvidia[0-7]` for eight NVIDIA GPUs, `/dev/nvidia0` for one; `/dev/dri/renderD[128-135]` for eight AMD
    GPUs; `/dev/neuron[0-15]` for sixteen Trainium chips (None: the default vendor's)."""
    return accelerator(vendor).devices.files(count)


def flags(vendor: str | None) -> str:
    """` Flags=amd_gpu_env` for AMD GPUs: the vendor's gres.conf flags, nothing for a vendor without."""
    value = accelerator(vendor).devices.flags
    return f" Flags={value}" if value else ""


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    assert slurm is not None
    lines = []
    for n in slurm.nodes:
        if not n.gres:
            continue
        vendor = ctx.plan.pool_nodes(n.pool).gpu_vendor or None
        lines.append(f"NodeName={ctx.conf(n.hostlist, pool_path(ctx, n.pool, 'name'))} Name=gpu "
                     f"Type={gpu_type(ctx, n)} File={device_files(n.gpu_count, vendor)}{flags(vendor)}")
    if not lines:
        return {}
    return {"slurm/gres.conf": ctx.header() + conf_lines(lines)}
