# shellcheck shell=bash disable=SC2154  # the script's own: $work, $periodic, $loaded, $speed_file
# gpu-clocks, gpu-pcie: no GPU held down by a hardware, thermal or power-brake slowdown; every PCIe link at
# its width, and its generation while busy. One reading of each GPU (nvidia-smi, or amd-smi on AMD) serves both.
# Sourced by clusterforge-health in the order of the files' names, with its helpers and results (fail,
# pass, skip, bounded, first_line, $work, $periodic, health.conf's keys); its code is in roles/health/codes.yml.

# Each vendor's reading is first written as one line per GPU, "GPU IDLE GEN GEN_MAX WIDTH WIDTH_MAX REASON=0|1 ...",
# "?" where the GPU does not say; one judge reads both vendors' lines, and write_prom exports them.
trim() { local _t=${2#"${2%%[![:space:]]*}"}; printf -v "$1" '%s' "${_t%"${_t##*[![:space:]]}"}"; }
active_flag() {  # VAR VALUE: "Active" 1, "Not Active" 0, else ?
  local v; trim v "$2"
  case "$v" in Active) printf -v "$1" 1 ;; "Not Active") printf -v "$1" 0 ;; *) printf -v "$1" '?' ;; esac
}
number() { local v; trim v "$2"; [[ "$v" =~ ^[0-9]+$ ]] || v='?'; printf -v "$1" '%s' "$v"; }
# nvidia-smi's speed query (smi_args[speed]) as speed lines. Read on an H100 (driver 580.159.04): "Active"/"Not
# Active"; idle is mask 0x...01 (gpu_idle alone); the generation may drop while idle, the width does not.
speed_from_nvidia() {
  local gpu idle hw thermal brake swt gen genmax width widthmax
  while IFS=, read -r gpu _ idle hw thermal brake swt gen genmax width widthmax; do  # _: the event mask
    number gpu "$gpu"; [ "$gpu" = '?' ] && continue
    active_flag idle "$idle"; active_flag hw "$hw"; active_flag thermal "$thermal"; active_flag brake "$brake"
    active_flag swt "$swt"
    number gen "$gen"; number genmax "$genmax"; number width "$width"; number widthmax "$widthmax"
    echo "$gpu $idle $gen $genmax $width $widthmax hw_slowdown=$hw hw_thermal_slowdown=$thermal" \
      "hw_power_brake_slowdown=$brake sw_thermal_slowdown=$swt"
  done <"$work/smi-speed" >"$speed_file"
}
# gpu-clocks (person): a GPU held down by a hardware or thermal reason (gpu_idle, application clocks and the power
# cap are not faults and are not read). gpu-pcie (reboot, a retrain can clear it): a link narrower than its
# maximum, or at a lower generation while the GPU is busy (an idle link drops its generation to save power).
judge_speed() {
  local what=$1 gpu idle gen genmax width widthmax reasons kv held slow="" narrow="" gpus=0 read_reasons=0 read_links=0
  local bad_clocks=""
  while read -r gpu idle gen genmax width widthmax reasons; do
    gpus=$((gpus + 1)) held=""
    for kv in $reasons; do
      [ "${kv#*=}" != '?' ] && read_reasons=1
      [ "${kv#*=}" = 1 ] && held="${held:+$held, }${kv%=*}"
    done
    [ -n "$held" ] && bad_clocks="${bad_clocks:+$bad_clocks; }GPU $gpu ($held)"
    if [ "$width" != '?' ] && [ "$widthmax" != '?' ]; then
      read_links=1
      [ "$width" -lt "$widthmax" ] && narrow="${narrow:+$narrow, }GPU $gpu x$width of x$widthmax"
    fi
    if [ "$gen" != '?' ] && [ "$genmax" != '?' ]; then
      read_links=1
      [ "$gen" -lt "$genmax" ] && [ "$idle" = 0 ] && slow="${slow:+$slow, }GPU $gpu gen $gen of $genmax (busy)"
    fi
  done <"$speed_file"
  if [ "$CHECK_GPU_CLOCKS" = 1 ]; then
    if [ "$read_reasons" = 0 ]; then skip gpu-clocks "$what reports no clock event reasons"
    elif [ -n "$bad_clocks" ]; then fail gpu-clocks person "clocks held down: $bad_clocks"
    else pass gpu-clocks "no GPU held down by a hardware, thermal or power-brake slowdown ($gpus GPUs)"; fi
  fi
  if [ "$CHECK_PCIE" = 1 ]; then
    if [ "$read_links" = 0 ]; then skip gpu-pcie "$what reports no PCIe link width or generation"
    elif [ -n "$narrow$slow" ]; then
      fail gpu-pcie reboot "PCIe link below its maximum: $narrow${narrow:+${slow:+, }}$slow"
    else pass gpu-pcie "PCIe links at their maximum width, and generation where busy ($gpus GPUs)"; fi
  fi
}


# AMD GPUs: amd-smi (ROCm 6.3 and later). Field names from ROCm/amdsmi: `amd-smi metric --json` gives per GPU
# "usage"."gfx_activity" {value, unit "%"} and "pcie" {"width", "speed" {value, unit "GT/s"}}; `amd-smi static
# --bus --json` gives "bus" {"max_pcie_width", "max_pcie_speed" {value, unit "GT/s"}}; `amd-smi metric --throttle
# --json` gives "throttle" {"<reason>_violation_status": "ACTIVE" | "NOT ACTIVE" | "N/A"} (MI300 and later; the
# amdsmi CHANGELOG for ROCm 6.3/6.4, amdsmi_violation_status_t). The reasons read: prochot (the processor hot
# signal), socket_thermal, vr_thermal, hbm_thermal; ppt (the package power limit) is the power cap, not a fault.
# Output is a list of GPUs (ROCm 6) or {"gpu_data": [...]} (ROCm 7). Idle: gfx_activity 0 %.
declare -A amd_args=(
  [metric]="metric --usage --pcie --json"
  [throttle]="metric --throttle --json"
  [bus]="static --bus --json"
)
amd_start() {
  local name pids=()
  for name in metric throttle bus; do
    # shellcheck disable=SC2086  # the arguments above are words
    { bounded "$SMI_TIMEOUT" "$work/amd-$name" amd-smi ${amd_args[$name]}; echo $? >"$work/amd-$name.rc"; } &
    pids+=($!)
  done
  wait "${pids[@]}"
}
# shellcheck disable=SC2016  # a Python program
speed_from_amd_py='
import json, sys
def gpus(path):
    try:
        text = open(path).read()
        starts = [i for i in (text.find("["), text.find("{")) if i >= 0]  # past any warning amd-smi prints first
        data = json.loads(text[min(starts):]) if starts else []
    except (OSError, ValueError):
        return {}
    if isinstance(data, dict):
        data = data.get("gpu_data", [data])
    return {str(g.get("gpu")): g for g in data if isinstance(g, dict) and "gpu" in g}
def value(x):
    return x.get("value") if isinstance(x, dict) else x
def number(x):
    x = value(x)
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None
def gen(x):  # GT/s (MT/s from older amd-smi) to the PCIe generation
    x = number(x)
    if x is None:
        return "?"
    x = x / 1000 if x > 1000 else x
    return str(next((g for g, rate in ((6, 64), (5, 32), (4, 16), (3, 8), (2, 5), (1, 2.5)) if x >= rate), "?"))
def flag(x):
    x = value(x)
    if isinstance(x, bool) or isinstance(x, int):
        return str(int(bool(x))) if x in (0, 1) else "?"
    x = str(x).strip().upper()
    return {"ACTIVE": "1", "NOT ACTIVE": "0"}.get(x, "?")
def text(x):
    x = number(x)
    return "?" if x is None else str(int(x))
metric, throttle, bus = (gpus(p) for p in sys.argv[1:4])
for gpu in sorted(set(metric) | set(throttle), key=lambda g: int(g) if g.isdigit() else 0):
    m, t, b = metric.get(gpu, {}), throttle.get(gpu, {}).get("throttle", {}), bus.get(gpu, {}).get("bus", {})
    pcie, usage = m.get("pcie", {}) or {}, m.get("usage", {}) or {}
    busy = number(usage.get("gfx_activity")) if isinstance(usage, dict) else None
    idle = "?" if busy is None else ("1" if busy == 0 else "0")
    t = t if isinstance(t, dict) else {}
    reasons = " ".join(r + "=" + flag(t.get(r + "_violation_status"))
                       for r in ("prochot", "socket_thermal", "vr_thermal", "hbm_thermal"))
    print(gpu, idle, gen(pcie.get("speed")), gen(b.get("max_pcie_speed")), text(pcie.get("width")),
          text(b.get("max_pcie_width")), reasons)
'


# NVIDIA: nvidia-smi's speed query, started with the others by 10-gpu-driver.sh
if [ "$CHECK_GPUS" = 1 ] && [ -n "$loaded" ] && [ "$(smi_rc names)" = 0 ] \
    && { [ "$CHECK_GPU_CLOCKS" = 1 ] || [ "$CHECK_PCIE" = 1 ]; }; then
  if [ "$(smi_rc speed)" != 0 ]; then
    [ "$CHECK_GPU_CLOCKS" = 1 ] && skip gpu-clocks "nvidia-smi clocks query failed: $(first_line "$work/smi-speed")"
    [ "$CHECK_PCIE" = 1 ] && skip gpu-pcie "nvidia-smi PCIe query failed: $(first_line "$work/smi-speed")"
  else
    speed_from_nvidia
    judge_speed nvidia-smi
  fi
fi

if [ "$CHECK_AMD_GPUS" = 1 ] && { [ "$CHECK_GPU_CLOCKS" = 1 ] || [ "$CHECK_PCIE" = 1 ]; }; then
  if ! command -v amd-smi >/dev/null 2>&1; then
    fail gpu-missing reboot "amd-smi not found (ROCm's amd-smi reads the AMD GPUs)"
  else
    amd_start
    if [ "$(cat "$work/amd-metric.rc")" != 0 ]; then
      rc=$(cat "$work/amd-metric.rc"); [ "$rc" = 124 ] && rc="timed out after $SMI_TIMEOUT s"
      fail gpu-missing reboot "amd-smi metric failed ($rc): $(first_line "$work/amd-metric")"
    elif ! bounded "$SMI_TIMEOUT" "$speed_file" python3 -c "$speed_from_amd_py" "$work/amd-metric" \
        "$work/amd-throttle" "$work/amd-bus"; then
      rm -f "$speed_file"
      [ "$CHECK_GPU_CLOCKS" = 1 ] && skip gpu-clocks "amd-smi output unreadable: $(first_line "$work/amd-metric")"
      [ "$CHECK_PCIE" = 1 ] && skip gpu-pcie "amd-smi output unreadable: $(first_line "$work/amd-metric")"
    elif [ ! -s "$speed_file" ]; then
      rm -f "$speed_file"
      fail gpu-missing reboot "amd-smi shows no GPU"
    else
      judge_speed amd-smi
    fi
  fi
fi
