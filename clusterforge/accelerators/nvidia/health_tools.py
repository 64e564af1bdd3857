"""NVIDIA's tools in what `clusterforge health` says: NCCL names the all-reduce, nccl-tests' failure lines (its
`NCCLCHECK`/`CUDACHECK` macros print "Test NCCL failure" / "Test CUDA failure"; NCCL itself logs "NCCL WARN"), and
the next steps that use nvidia-smi and DCGM (nvidia-smi(1): `-q -d PERFORMANCE` lists the clock throttle reasons,
`-pl` caps board power; DCGM's `dcgmi diag -r <level>`)."""

from clusterforge.accelerator_kernel.health_tools import HealthTools

HEALTH_TOOLS = HealthTools(
    collectives="NCCL",
    failure_markers=("Test NCCL failure", "Test CUDA failure", "Test failure", "NCCL WARN"),
    next_steps={
        ("perf", "slow"): "look for the cause first (GpuHardwareSlowdown, GpuPcieLinkDegraded, GpuHot, `nvidia-smi -q "
                          "-d PERFORMANCE` on the node); drain the node, reset the GPU and rerun `clusterforge health "
                          "perf` on it; RMA the GPU if it stays slow",
        ("allreduce", "failed"): "read the first error above (NCCL's or srun's); check that the nodes are idle and up "
                                 "(`sinfo -n <nodes>`) and rerun with NCCL_DEBUG=WARN exported",
        ("diag", "fail"): "drain the node (--drain does it), read `dcgmi diag -r <level>` on it and follow DCGM's "
                          "guidance for the failed test (reset the GPU or reboot when idle, reseat, RMA if it fails "
                          "again)",
        ("measured", "feed"): "the feed may trip: shed load from the rack now (drain nodes, cap power with `nvidia-smi "
                              "-pl`), then check the rack's feed and find why the rack draws more than planned",
    })
