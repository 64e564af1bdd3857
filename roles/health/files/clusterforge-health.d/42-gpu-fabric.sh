# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-fabric: every GPU registered with the NVSwitch fabric.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

[ "$CHECK_GPUS" = 1 ] && [ -n "$loaded" ] && [ "$(smi_rc names)" = 0 ] || return 0  # nvidia-smi answered
if [ "$CHECK_FABRIC" = 1 ]; then
  bad=""
  if [ "$(smi_rc fabric)" != 0 ]; then
    bad="nvidia-smi fabric query failed: $(first_line "$work/smi-fabric")"
  else
    while IFS=, read -r gpu state status; do
      read -r state <<<"$state"
      read -r status <<<"$status"
      [ "$state" = Completed ] && [ "$status" = Success ] || bad="${bad:+$bad, }GPU $gpu $state/$status"
    done <"$work/smi-fabric"
  fi
  if [ -n "$bad" ]; then fail gpu-fabric reboot "NVSwitch fabric not registered: $bad"
  else pass gpu-fabric "NVSwitch fabric Completed/Success on every GPU"; fi
fi
