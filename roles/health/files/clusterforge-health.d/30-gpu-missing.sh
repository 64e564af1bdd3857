# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-missing: nvidia-smi answers, and shows GPU_COUNT GPUs of the model's family.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

[ "$CHECK_GPUS" = 1 ] && [ -n "$loaded" ] || return 0
smi=$(smi_rc names)
count=$(grep -c . "$work/smi-names")
family=${GPU_MODEL%%-*}
if [ "$smi" -ne 0 ]; then
  [ "$smi" -eq 124 ] && why="timed out after $SMI_TIMEOUT s" || why="$smi"
  fail gpu-missing reboot "nvidia-smi failed ($why): $(first_line "$work/smi-names")"
elif [ "$count" -ne "$GPU_COUNT" ]; then
  fail gpu-missing reboot "$count GPUs visible, expected $GPU_COUNT"
elif [ -n "$family" ] && grep -qv -- "$family" "$work/smi-names"; then
  fail gpu-missing person "GPU model is not $family: $(sort -u "$work/smi-names" | tr '\n' ';')"
else
  pass gpu-missing "$count GPUs ($family)"
fi
