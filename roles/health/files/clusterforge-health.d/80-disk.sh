# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# disk: each of DISK_PATHS is writable and has DISK_MIN_FREE_PCT % free.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

if [ "$CHECK_DISK" = 1 ]; then
  bad="" report=""
  for path in $DISK_PATHS; do
    if [ ! -d "$path" ]; then bad="${bad:+$bad, }$path missing"; continue; fi
    if bounded "$MOUNT_TIMEOUT" "$work/probe" mktemp -p "$path" .clusterforge-health.XXXXXX; then
      rm -f "$(cat "$work/probe")"
    else
      bad="${bad:+$bad, }$path not writable"; continue
    fi
    if ! bounded "$MOUNT_TIMEOUT" "$work/df" df -P "$path"; then bad="${bad:+$bad, }$path: df failed"; continue; fi
    # Filesystem 1024-blocks Used Available Capacity Mounted-on
    free=$(awk 'NR == 2 && $3 + $4 > 0 { printf "%d", $4 * 100 / ($3 + $4) }' "$work/df")
    if [ -z "$free" ]; then bad="${bad:+$bad, }$path: df unreadable"
    elif [ "$free" -lt "$DISK_MIN_FREE_PCT" ]; then bad="${bad:+$bad, }$path $free% free"
    else report="${report:+$report, }$path $free% free"; fi
  done
  if [ -n "$bad" ]; then fail disk person "$bad (need writable, >= $DISK_MIN_FREE_PCT% free)"
  else pass disk "$report"; fi
fi
