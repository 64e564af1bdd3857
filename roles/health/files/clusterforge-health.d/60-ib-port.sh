# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# ib-port: IB_PORTS InfiniBand or RoCE ports Active, LinkUp and at IB_RATE_GBPS.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

if [ "$CHECK_INFINIBAND" = 1 ]; then
  good=0 bad="" candidates=0
  # IB_LEAVES: the leaf switch of each rail in the cabling plan (rail i: the i-th fabric port, in device order),
  # so a bad port's reason names the switch to look at
  read -r -a leaves <<<"${IB_LEAVES:-}"
  while IFS= read -r port; do
    [ -d "$port" ] || continue
    dev=${port%/ports/*}; dev=${dev##*/}; num=${port##*/}
    if [ -n "$IB_DEVICES" ]; then
      case " $IB_DEVICES " in *" $dev "*|*" $dev/$num "*) ;; *) continue ;; esac
    fi
    layer=$(cat "$port/link_layer" 2>/dev/null)
    [ -n "$IB_LINK_LAYER" ] && [ -n "$layer" ] && [ "$layer" != "$IB_LINK_LAYER" ] && continue
    candidates=$((candidates + 1))
    where=""; [ -n "${leaves[candidates - 1]:-}" ] && where=" (rail $candidates, ${leaves[candidates - 1]})"
    state=$(cat "$port/state" 2>/dev/null); state=${state#*: }
    phys=$(cat "$port/phys_state" 2>/dev/null); phys=${phys#*: }
    rate=$(cat "$port/rate" 2>/dev/null); rate=${rate%% *}; rate=${rate%%.*}
    if [ "$state" != ACTIVE ] || [ "$phys" != LinkUp ]; then
      bad="${bad:+$bad, }$dev/$num ${state:-?}/${phys:-?}$where"
    elif [ "$IB_RATE_GBPS" -gt 0 ] && [ "${rate:-0}" -lt "$IB_RATE_GBPS" ]; then
      bad="${bad:+$bad, }$dev/$num at ${rate:-?} Gb/s$where"
    else
      good=$((good + 1))
    fi
  done < <(printf '%s\n' "$IB_SYSFS"/*/ports/* | sort -V)  # mlx5_2 before mlx5_10: the NICs' order, the rails'
  want="ACTIVE/LinkUp"; [ "$IB_RATE_GBPS" -gt 0 ] && want="$want at $IB_RATE_GBPS Gb/s"
  if [ "$good" -lt "$IB_PORTS" ]; then
    fail ib-port person "$good of $IB_PORTS ports $want${bad:+: $bad}"
  else
    pass ib-port "$good ports $want${bad:+ (also: $bad)}"
  fi
fi
