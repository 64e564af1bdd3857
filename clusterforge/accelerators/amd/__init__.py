"""AMD Instinct GPUs: ROCm and RCCL.

Devices are `/dev/dri/renderD<minor>`, the DRM render node of each GPU (Slurm's gpu/rsmi). Render minors start at
128 in PCI probe order, so on an 8-GPU server with no other display device they are 128-135; a BMC's display
controller probed first, or a GPU partitioned into several (MI300X in CPX mode), moves or multiplies them, which
`AutoDetect=rsmi` on one node shows. Lines carry `Flags=amd_gpu_env`: slurmd then sets only ROCR_VISIBLE_DEVICES,
not CUDA_VISIBLE_DEVICES as well, which ROCm would apply a second time to the already renumbered devices.
"""

from clusterforge.accelerator_kernel.accelerator import Accelerator, Devices, PinVar

ACCELERATOR = Accelerator(
    name="amd", title="AMD", stack="rocm", stack_title="ROCm/RCCL", pins=("rocm", "rccl"),
    devices=Devices("/dev/dri/renderD", 128, "amd_gpu_env"),
    pin_vars=(
        PinVar("rocm", "rocm_version", True, "ROCm and its kernel driver: loaded by a reboot, with the GPUs idle"),
        PinVar("rccl", "rocm_rccl_version", False, "jobs load librccl: replaced while no job runs there"),
        PinVar("amdgpu_driver", "rocm_amdgpu_version", True, "a new amdgpu kernel module: loaded by a reboot"),
    ))
