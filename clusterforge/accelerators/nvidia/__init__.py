"""NVIDIA GPUs: CUDA and NCCL, `/dev/nvidia<i>` (Slurm's gpu/nvml), the roles' default vendor."""

from clusterforge.accelerator_kernel.accelerator import Accelerator, Devices, PinVar

ACCELERATOR = Accelerator(
    name="nvidia", title="NVIDIA", stack="cuda", stack_title="CUDA/NCCL", pins=("nvidia_driver", "cuda", "nccl"),
    devices=Devices("/dev/nvidia"),
    pin_vars=(
        PinVar("nvidia_driver", "nvidia_driver_version", True, "a new kernel module: loaded by a reboot, with the GPUs "
               "idle"),
        PinVar("cuda", "nvidia_driver_cuda_version", True, "CUDA comes with the driver's packages: the same drain and "
               "reboot"),
        PinVar("nccl", "nccl_version", False, "jobs load libnccl: replaced while no job runs there, no reboot"),
    ),
    enable_var="nvidia_driver_enabled", default=True,
    # an NVL72's 18 trays share one NVLink domain; roles/imex reads each node's as `nvlink_domain`
    domain_title="NVLink domain", domain_var="nvlink_domain",
    # the x86_64 DLAMI set of 2026-10 (driver, CUDA) with an NCCL built for CUDA 13: the compatibility tables know
    # them to work together
    versions=(("nvidia_driver", "595.91.07"), ("cuda", "13.2"), ("nccl", "2.30.7")))
