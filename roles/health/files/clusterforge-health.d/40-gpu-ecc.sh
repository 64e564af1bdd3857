# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-ecc: no uncorrected volatile ECC errors on a GPU.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

[ "$CHECK_GPUS" = 1 ] && [ -n "$loaded" ] && [ "$(smi_rc names)" = 0 ] || return 0  # nvidia-smi answered
if [ "$CHECK_ECC" = 1 ]; then
  if [ "$(smi_rc ecc)" != 0 ]; then
    skip gpu-ecc "nvidia-smi ECC query failed: $(first_line "$work/smi-ecc")"
  else
    bad=""
    while IFS=', ' read -r gpu volatile _; do
      [[ "$volatile" =~ ^[0-9]+$ ]] && [ "$volatile" -gt 0 ] && bad="${bad:+$bad, }GPU $gpu: $volatile"
    done <"$work/smi-ecc"
    if [ -n "$bad" ]; then fail gpu-ecc reboot "uncorrected ECC errors since the driver loaded ($bad)"
    else pass gpu-ecc "no uncorrected ECC errors"; fi
  fi
fi
