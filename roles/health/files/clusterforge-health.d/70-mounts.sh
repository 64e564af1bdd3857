# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# lustre-mount, shared-mount: the file systems are mounted and answer.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

# mount_check CODE ACTION MOUNT [TYPE]: mounted (findmnt) and answering (stat -f) within MOUNT_TIMEOUT seconds
mount_check() {
  local code=$1 action=$2 mount=$3 type=${4:-} rc
  bounded "$MOUNT_TIMEOUT" "$work/findmnt" findmnt -n ${type:+-t "$type"} --mountpoint "$mount"
  rc=$?
  if [ "$rc" -eq 124 ]; then
    fail "$code" "$action" "$mount: findmnt timed out after $MOUNT_TIMEOUT s"
    return
  elif [ "$rc" -ne 0 ]; then
    fail "$code" "$action" "$mount is not mounted${type:+ (no $type mount there)}"
    return
  fi
  bounded "$MOUNT_TIMEOUT" "$work/stat" stat -f "$mount"
  rc=$?
  if [ "$rc" -eq 124 ]; then fail "$code" "$action" "$mount does not answer (stat -f timed out after $MOUNT_TIMEOUT s)"
  elif [ "$rc" -ne 0 ]; then fail "$code" "$action" "$mount: stat -f failed: $(first_line "$work/stat")"
  else pass "$code" "$mount mounted and answering"; fi
}
[ "$CHECK_LUSTRE" = 1 ] && mount_check lustre-mount reboot "$LUSTRE_MOUNT" lustre
[ "$CHECK_SHARED" = 1 ] && mount_check shared-mount person "$SHARED_MOUNT"
