# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-remap: no row remapping pending (a reset applies it) or failed (spare rows exhausted).
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

[ "$CHECK_GPUS" = 1 ] && [ -n "$loaded" ] && [ "$(smi_rc names)" = 0 ] || return 0  # nvidia-smi answered
if [ "$CHECK_REMAP" = 1 ]; then
  if [ "$(smi_rc remap)" != 0 ]; then
    skip gpu-remap "nvidia-smi row remapping query failed: $(first_line "$work/smi-remap")"
  else
    failed="" pending=""
    while IFS=', ' read -r bus _ _ is_pending is_failed; do
      [ "$is_failed" = Yes ] && failed="${failed:+$failed, }$bus"
      [ "$is_pending" = Yes ] && pending="${pending:+$pending, }$bus"
    done <"$work/smi-remap"
    if [ -n "$failed" ]; then fail gpu-remap person "row remapping failed on $failed (spare rows exhausted: RMA)"
    elif [ -n "$pending" ]; then fail gpu-remap reboot "row remapping pending on $pending (needs a GPU reset)"
    else pass gpu-remap "no pending or failed row remapping"; fi
  fi
fi
