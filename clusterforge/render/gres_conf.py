"""gres.conf: the device files of every GPU pool, by the vendor of its GPUs (`File=` explicit, so no NVML, ROCm SMI
or Neuron runtime library is needed at slurmd's build or start); values pass `RenderContext.conf` like slurm.conf's.

Each vendor's kernel driver names its devices differently (Slurm's gpu plugins, `src/plugins/gpu/*`):

- NVIDIA: `/dev/nvidia<i>`, one per GPU from 0 (gpu/nvml, gpu/nvidia).
- AMD: `/dev/dri/renderD<minor>`, the DRM render node of each GPU (gpu/rsmi). Render minors start at 128 and
  are given in PCI probe order, so on an 8-GPU server with no other display device they are 128-135; but a BMC's
  or a baseboard display controller probed first moves them up, and a GPU partitioned into several (MI300X in
  CPX mode) has one render node per partition. The minors therefore vary per host: `AutoDetect=rsmi` on one
  node (with the ROCm SMI library) lists the real files, and a gres.conf that gives both `AutoDetect` and `File=`
  has slurmd check one against the other and drain the node on a mismatch. Lines for AMD GPUs carry
  `Flags=amd_gpu_env`: slurmd then sets only ROCR_VISIBLE_DEVICES, not CUDA_VISIBLE_DEVICES as well, which ROCm
  would apply a second time to the already renumbered devices.
- AWS Trainium/Inferentia: `/dev/neuron<i>`, one per chip from 0 (gpu/nrt).

AutoDetect is not written: gres.conf(5) says "AutoDetect cannot be used with cloud nodes", so the AWS target needs
the explicit files, and the same explicit form everywhere keeps one renderer and no library at build time.
"""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.slurm_conf import gpu_type, pool_path

# vendor (the catalog's gpus.vendor) -> (device file prefix, first device number, gres.conf Flags or "")
DEVICES = {
    "nvidia": ("/dev/nvidia", 0, ""),
    "amd": ("/dev/dri/renderD", 128, "amd_gpu_env"),
    "aws": ("/dev/neuron", 0, ""),
}


def device_files(count: int, vendor: str = "nvidia") -> str:
    """`/dev/nvidia[0-7]` for eight NVIDIA GPUs, `/dev/nvidia0` for one; `/dev/dri/renderD[128-135]` for eight AMD
    GPUs; `/dev/neuron[0-15]` for sixteen Trainium chips."""
    prefix, first, _ = DEVICES[vendor]
    return f"{prefix}{first}" if count == 1 else f"{prefix}[{first}-{first + count - 1}]"


def flags(vendor: str) -> str:
    """` Flags=amd_gpu_env` for AMD GPUs, nothing for the others."""
    value = DEVICES[vendor][2]
    return f" Flags={value}" if value else ""


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    assert slurm is not None
    lines = []
    for n in slurm.nodes:
        if not n.gres:
            continue
        vendor = ctx.plan.pool_nodes(n.pool).gpu_vendor or "nvidia"
        lines.append(f"NodeName={ctx.conf(n.hostlist, pool_path(ctx, n.pool, 'name'))} Name=gpu "
                     f"Type={gpu_type(ctx, n)} File={device_files(n.gpu_count, vendor)}{flags(vendor)}")
    if not lines:
        return {}
    return {"slurm/gres.conf": ctx.header() + conf_lines(lines)}
