# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# dcgm-diag: `dcgmi diag -r DCGM_DIAG_LEVEL` passes (the periodic run only).
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

# Last: it takes seconds (level 1), and SLURM kills a HealthCheckProgram after 60 s.
if [ "$DCGM_DIAG_LEVEL" -gt 0 ] && [ "$periodic" = 1 ]; then
  if ! command -v dcgmi >/dev/null 2>&1; then
    skip dcgm-diag "dcgmi not installed"
  else
    bounded "$DCGM_TIMEOUT" "$work/dcgm" dcgmi diag -r "$DCGM_DIAG_LEVEL"
    rc=$?
    if [ "$rc" -eq 0 ]; then pass dcgm-diag "dcgmi diag -r $DCGM_DIAG_LEVEL passed"
    elif grep -qiE 'unable to (establish a )?connect|host engine' "$work/dcgm"; then
      skip dcgm-diag "dcgmi cannot reach nv-hostengine: $(first_line "$work/dcgm")"
    elif [ "$rc" -eq 124 ]; then fail dcgm-diag person "dcgmi diag -r $DCGM_DIAG_LEVEL timed out after $DCGM_TIMEOUT s"
    else
      detail=$(grep -iE '\bfail' "$work/dcgm" | tr -s ' |' ' ' | sed 's/^ //; s/ $//' | head -3 | paste -sd ';' -)
      fail dcgm-diag person "dcgmi diag -r $DCGM_DIAG_LEVEL: ${detail:-exit $rc}"
    fi
  fi
fi
