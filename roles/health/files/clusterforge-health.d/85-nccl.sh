# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# nccl: libnccl is the pinned version (the periodic run only).
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

if [ "$CHECK_NCCL" = 1 ] && [ "$periodic" = 1 ]; then
  IFS=. read -r major minor patch <<<"$NCCL_VERSION"
  expected=$((major * 10000 + minor * 100 + ${patch:-0}))
  bounded 30 "$work/nccl" python3 -c 'import ctypes; l = ctypes.CDLL("libnccl.so.2"); v = ctypes.c_int(); l.ncclGetVersion(ctypes.byref(v)); print(v.value)'
  got=$(grep -E '^[0-9]+$' "$work/nccl" | head -1)
  if [ "$got" = "$expected" ]; then pass nccl "NCCL $NCCL_VERSION ($got)"
  else fail nccl person "NCCL reports ${got:-nothing}, expected $expected"; fi
fi
