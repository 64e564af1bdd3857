# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# nvlink: every NVLink link active (the periodic run only).
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

[ "$CHECK_GPUS" = 1 ] && [ -n "$loaded" ] && [ "$(smi_rc names)" = 0 ] || return 0  # nvidia-smi answered
if [ "$CHECK_NVLINK" = 1 ] && [ "$periodic" = 1 ]; then
  if [ "$(smi_rc nvlink)" != 0 ]; then
    fail nvlink reboot "nvidia-smi nvlink -s failed: $(first_line "$work/smi-nvlink")"
  else
    # GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...) / "	 Link 0: 26.562 GB/s" or "	 Link 3: <inactive>"
    gpu="?" links=0 down=""
    gpu_re='^GPU ([0-9]+):' link_re='Link ([0-9]+): *(.*)$'
    while IFS= read -r line; do
      if [[ "$line" =~ $gpu_re ]]; then gpu=${BASH_REMATCH[1]}
      elif [[ "$line" =~ $link_re ]]; then
        links=$((links + 1)) link=${BASH_REMATCH[1]} speed=${BASH_REMATCH[2]}
        [[ "$speed" =~ [Ii]nactive ]] && down="${down:+$down, }GPU $gpu link $link"
      fi
    done <"$work/smi-nvlink"
    if [ "$links" -eq 0 ]; then fail nvlink reboot "no NVLink links reported"
    elif [ -n "$down" ]; then fail nvlink reboot "inactive: $down"
    else pass nvlink "$links NVLink links active"; fi
  fi
fi
