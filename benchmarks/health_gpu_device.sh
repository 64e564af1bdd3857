#!/bin/bash
# The health role's GPU tiers on a real GPU, with the role's own script and a health.conf for this machine:
# the fast tier (--check and --prolog, timed), the perf tier (--perf --json) with the recorded checksum, and three
# planted faults that must each be caught with the right code:
#   - a real slow-down: a second process keeps the GPU busy with matrix products while the perf tier runs
#     (gpu-slow against a floor of 80 % of what this GPU measured alone); no setting of the GPU is changed
#   - a throttled GPU: nvidia-smi's answer with hw_slowdown Active (a stand-in in front of the real nvidia-smi)
#   - a wrong answer: a recorded checksum that is not this product's (gpu-sdc, never gpu-slow)
# Usage: bash benchmarks/health_gpu_device.sh [OUTDIR]   (needs nvcc, cuBLAS, a GPU; PyTorch for the load)
set -u
out=${1:-${OUT:-/tmp/health-gpu}}
mkdir -p "$out"
exec > >(tee -a "$out/health-gpu.txt") 2>&1
work=$(mktemp -d)
script=roles/health/files/clusterforge-health
checksum=$(sed -n 's/^health_perf_checksum: *"\{0,1\}\([0-9a-f]*\)"\{0,1\}$/\1/p' roles/health/defaults/main.yml)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
real_smi=$(command -v nvidia-smi)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
model=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
family=$(echo "$model" | awk "{print \$2}")
echo "== $gpus x $model, driver $driver; recorded checksum ${checksum:-none}"
"$nvcc" -O3 -std=c++17 -o "$work/clusterforge-gpu-perf" roles/health/files/clusterforge-gpu-perf.cu -lcublas \
  || { echo "BUILD FAILED"; exit 1; }
mkdir -p "$work/prom"
conf() {  # conf FILE [KEY=VALUE...]: health.conf for this machine, the fast tier's GPU checks on
  {
    echo "CHECK_GPUS=1 GPU_COUNT=$gpus GPU_MODEL=$family DRIVER_VERSION=$driver"
    echo "CHECK_ECC=1 CHECK_REMAP=1 CHECK_XID=1 KERNEL_LOG_FILE=$work/kern.log"
    echo "CHECK_GPU_CLOCKS=1 CHECK_PCIE=1 CHECK_DISK=1 DISK_PATHS=/tmp"
    echo "TEXTFILE_DIR=$work/prom PERF_PROGRAM=$work/clusterforge-gpu-perf PERF_CHECKSUM=$checksum"
    shift; for kv in "$@"; do echo "$kv"; done
  } >"$1"
}
: >"$work/kern.log"
conf "$work/health.conf"
ms() { echo $(( (${EPOCHREALTIME/./} - $1) / 1000 )); }

echo "== fast tier, periodic checks (--check), 5 runs"
for i in 1 2 3 4 5; do t=${EPOCHREALTIME/./}; bash "$script" --check --conf "$work/health.conf" >"$work/check.txt"; rc=$?; echo "run $i: exit $rc, $(ms "$t") ms"; done
cat "$work/check.txt"
echo "== fast tier, prolog (--prolog), 5 runs"
for i in 1 2 3 4 5; do t=${EPOCHREALTIME/./}; bash "$script" --prolog --conf "$work/health.conf" >"$work/prolog.txt"; rc=$?; echo "run $i: exit $rc, $(ms "$t") ms"; done
cat "$work/prolog.txt"
echo "== the textfile's GPU speed series"
grep -E '^clusterforge_(gpu|health_(ok|failure|duration))' "$work/prom/clusterforge_health.prom"

echo "== perf tier (--perf --json), alone"
t=${EPOCHREALTIME/./}; bash "$script" --perf --json --conf "$work/health.conf" | tee "$out/perf-alone.json"; echo "exit ${PIPESTATUS[0]}, $(ms "$t") ms"
cat "$work/prom/clusterforge_gpu_perf.prom"
alone=$(python3 -c 'import json,sys; print(min(g["gemm_tflops"] for g in json.load(open(sys.argv[1]))["gpus"]))' "$out/perf-alone.json")
floor=$(python3 -c "print(round(0.8 * $alone))")

echo "== planted: the GPU shared with another process's matrix products (floor $floor TFLOP/s, 80 % of alone)"
conf "$work/slow.conf" "PERF_MIN_GEMM_TFLOPS=$floor"
python3 -c '
import time, torch
a = torch.rand(8192, 8192, device="cuda", dtype=torch.bfloat16); end = time.time() + 12
while time.time() < end:
    for _ in range(20): a @ a
    torch.cuda.synchronize()' &
load=$!
sleep 3
bash "$script" --perf --json --conf "$work/slow.conf" | tee "$out/perf-shared.json"; echo "exit ${PIPESTATUS[0]}"
wait "$load"

echo "== planted: nvidia-smi reports hw_slowdown Active"
mkdir -p "$work/fake"
cat >"$work/fake/nvidia-smi" <<FAKE
#!/bin/bash
case "\$*" in
  *clocks_event_reasons.hw_slowdown*) "$real_smi" "\$@" | awk 'BEGIN { FS = OFS = ", " } { \$4 = "Active"; print }' ;;
  *) exec "$real_smi" "\$@" ;;
esac
FAKE
chmod +x "$work/fake/nvidia-smi"
PATH="$work/fake:$PATH" bash "$script" --check --conf "$work/health.conf"; echo "exit $?"

echo "== planted: a recorded checksum that is not this product's"
conf "$work/sdc.conf" "PERF_CHECKSUM=0123456789abcdef"
bash "$script" --perf --json --conf "$work/sdc.conf" | tee "$out/perf-sdc.json"; echo "exit ${PIPESTATUS[0]}"
