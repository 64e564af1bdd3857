# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-xid: this boot's kernel log has no Xid that needs a GPU reset or a reboot, and no GPU's recovery action
# is pending.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

# NVIDIA's Xid catalog (Ampere and later): the codes whose resolution is a GPU reset or a node reboot. Others
# (13, 31, 43, 45, 63, 92, 94, ...) are the application's or informational and never fail the check; Xid 94 (a
# contained ECC error) leaves an uncorrected ECC count and a pending row remap, which gpu-ecc and gpu-remap catch.
xid_meaning() {
  case "$1" in
    46) echo "GPU stopped processing" ;;
    48) echo "double-bit ECC error" ;;
    62) echo "internal micro-controller halt" ;;
    64) echo "ECC page retirement or row remapping failure" ;;
    74) echo "NVLink error" ;;
    79) echo "GPU has fallen off the bus" ;;
    95) echo "uncontained ECC error" ;;
    109) echo "context switch timeout" ;;
    110) echo "security fault" ;;
    119) echo "GSP RPC timeout" ;;
    120) echo "GSP error" ;;
    136) echo "link training error" ;;
    140) echo "unrecovered ECC error" ;;
    143) echo "GPU initialization failure" ;;
    144|145|146|147|148|149|150) echo "NVLink error" ;;
    155|156) echo "GPU reset required (catalog RESET_GPU)" ;;
    158) echo "fatal timeout" ;;
    *) return 1 ;;
  esac
}

check_xid() {
  local log=$work/kernel-log line pci xid rest text found="" others="" seen=""
  if [ -n "$KERNEL_LOG_FILE" ]; then
    if [ -e "$KERNEL_LOG_FILE" ]; then
      grep -a 'NVRM: Xid' "$KERNEL_LOG_FILE" >"$log" 2>/dev/null
    else
      : >"$log"
    fi
  elif command -v journalctl >/dev/null 2>&1; then
    if ! bounded "$LOG_TIMEOUT" "$work/journal" journalctl -k -b -q --no-pager; then
      skip gpu-xid "journalctl -k -b failed: $(first_line "$work/journal")"
      return
    fi
    grep -a 'NVRM: Xid' "$work/journal" >"$log"
  elif command -v dmesg >/dev/null 2>&1; then
    # no systemd journal (minimal images): the kernel's ring buffer, which holds this boot's recent messages
    if ! bounded "$LOG_TIMEOUT" "$work/journal" dmesg; then
      skip gpu-xid "dmesg failed: $(first_line "$work/journal")"
      return
    fi
    grep -a 'NVRM: Xid' "$work/journal" >"$log"
  else
    skip gpu-xid "neither journalctl nor dmesg to read the kernel log"
    return
  fi
  # NVRM: Xid (PCI:0000:9a:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
  local xid_re='NVRM: Xid \(([^)]*)\): *([0-9]+)(, *(.*))?'
  while IFS= read -r line; do
    [[ "$line" =~ $xid_re ]] || continue
    pci=${BASH_REMATCH[1]#PCI:}
    xid=${BASH_REMATCH[2]}
    rest=${BASH_REMATCH[4]}
    if [ "$xid" = 154 ]; then
      # "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)": the driver's own verdict
      text=${rest##* to }
      [[ "$text" =~ [Nn]one ]] && continue
      text="recovery action ${text:-changed} (Xid 154)"
    elif text=$(xid_meaning "$xid"); then
      :
    else
      case " $others " in *" $xid "*) ;; *) others="${others:+$others }$xid" ;; esac
      continue
    fi
    case " $seen " in *" $xid "*) continue ;; esac
    seen="${seen:+$seen }$xid"
    if [ -z "$found" ]; then found="Xid $xid on $pci: $text"; fi
  done <"$log"
  # the same verdict, as nvidia-smi reports it now
  local gpu action stuck=""
  if [ -s "$work/smi-recovery" ] && [ "$(cat "$work/smi-recovery.rc" 2>/dev/null)" = 0 ]; then
    while IFS=, read -r gpu action; do
      read -r action <<<"$action"
      case "$action" in ""|None|N/A|"[N/A]"|"[Not Supported]") ;; *) stuck="${stuck:+$stuck, }GPU $gpu $action" ;; esac
    done <"$work/smi-recovery"
  fi
  if [ -n "$found" ]; then
    local also=${seen#* }
    [ "$also" != "$seen" ] && found="$found (also Xid ${also// /, })"
    [ -n "$stuck" ] && found="$found; recovery action: $stuck"
    fail gpu-xid reboot "$found"
  elif [ -n "$stuck" ]; then
    fail gpu-xid reboot "recovery action: $stuck"
  else
    pass gpu-xid "no Xid that needs a reset or reboot this boot${others:+ (seen: ${others// /, })}"
  fi
}

[ "$CHECK_XID" = 1 ] && check_xid
