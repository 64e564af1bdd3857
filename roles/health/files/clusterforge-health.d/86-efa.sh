# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# efa: EFA_INTERFACES EFA interfaces (the periodic run only).
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

if [ "$CHECK_EFA" = 1 ] && [ "$periodic" = 1 ]; then
  bounded 30 "$work/efa" /opt/amazon/efa/bin/fi_info -p efa -t FI_EP_RDM
  efa=$(grep -c 'domain:.*rdm' "$work/efa")
  if [ "$efa" -ge "$EFA_INTERFACES" ]; then pass efa "$efa EFA interfaces"
  else fail efa person "$efa EFA interfaces, expected $EFA_INTERFACES"; fi
fi
