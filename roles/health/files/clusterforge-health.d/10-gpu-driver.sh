# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-driver: the NVIDIA driver is loaded and is the pinned one; starts the nvidia-smi queries the GPU checks
# after it read.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

loaded=""
if [ "$CHECK_GPUS" = 1 ]; then
  if [ ! -r "$NVIDIA_VERSION_FILE" ]; then
    fail gpu-driver person "nvidia driver not loaded"
  else
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05 ..." or "... Open Kernel Module for x86_64
    # 570.195.03 ..." or "... Kernel Module for aarch64 ...": the first dotted number on the line
    loaded=$(sed -n '1s/^NVRM version://p' "$NVIDIA_VERSION_FILE" | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1)
    if [ -n "$DRIVER_VERSION" ] && [ "$loaded" != "$DRIVER_VERSION" ]; then
      fail gpu-driver person "driver $loaded loaded, expected $DRIVER_VERSION"
    else
      pass gpu-driver "driver $loaded loaded"
    fi
    wanted=(names)
    [ "$CHECK_XID" = 1 ] && wanted+=(recovery)
    [ "$CHECK_ECC" = 1 ] && wanted+=(ecc)
    [ "$CHECK_REMAP" = 1 ] && wanted+=(remap)
    [ "$CHECK_FABRIC" = 1 ] && wanted+=(fabric)
    [ "$CHECK_NVLINK" = 1 ] && [ "$periodic" = 1 ] && wanted+=(nvlink)
    { [ "$CHECK_GPU_CLOCKS" = 1 ] || [ "$CHECK_PCIE" = 1 ]; } && wanted+=(speed)
    smi_start "${wanted[@]}"
  fi
elif [ "$GPU_COUNT" -gt 0 ] && [ "$CHECK_AMD_GPUS" != 1 ]; then
  skip gpu "GPU checks off (CHECK_GPUS=0)"
fi
