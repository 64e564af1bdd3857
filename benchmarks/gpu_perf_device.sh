#!/bin/bash
# The GPU perf tier on a real GPU: build clusterforge-gpu-perf as the health role does at bake time, run it, check
# its known answer against the CPU reference (benchmarks/gpu_perf_reference.py, numpy), and measure the same two
# figures through PyTorch on the same GPU for a side-by-side. Usage: bash benchmarks/gpu_perf_device.sh [OUTDIR]
# Results: OUTDIR/gpu-perf.txt (and stdout). Needs nvcc, cuBLAS and a GPU; PyTorch and numpy where present.
set -u
out=${1:-${OUT:-/tmp/gpu-perf}}
mkdir -p "$out"
work=$(mktemp -d)
exec > >(tee -a "$out/gpu-perf.txt") 2>&1
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
echo "== GPU"; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv
echo "== nvcc: $("$nvcc" --version | tail -1)"
start=${EPOCHREALTIME/./}
"$nvcc" -O3 -std=c++17 -o "$work/clusterforge-gpu-perf" roles/health/files/clusterforge-gpu-perf.cu -lcublas \
  || { echo "BUILD FAILED"; exit 1; }
echo "build: $(( (${EPOCHREALTIME/./} - start) / 1000 )) ms"
cp "$work/clusterforge-gpu-perf" "$out/" 2>/dev/null
echo "== clusterforge-gpu-perf (defaults: 8192^3 bf16 for 3 s, 2 GiB copy, 4096^3 known answer), three runs"
for run in 1 2 3; do /usr/bin/time -f "wall %e s, max RSS %M KiB" "$work/clusterforge-gpu-perf" --device 0; done
echo "== the known answer on the CPU (numpy)"
python3 benchmarks/gpu_perf_reference.py 4096 || echo "numpy reference failed"
echo "== the same figures through PyTorch on this GPU"
python3 - <<'PY' || echo "PyTorch baseline failed"
import time, torch
n = 8192
a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
for _ in range(3): a @ b
torch.cuda.synchronize(); t = time.perf_counter(); k = 0
while time.perf_counter() - t < 3.0:
    for _ in range(10): a @ b
    k += 10; torch.cuda.synchronize()
print(f"torch bf16 {n}^3 GEMM: {2 * n**3 * k / (time.perf_counter() - t) / 1e12:.1f} TFLOP/s")
x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range(20): y.copy_(x)
torch.cuda.synchronize()
print(f"torch device-to-device copy 2 GiB: {2 * x.numel() * 20 / (time.perf_counter() - t) / 1e9:.1f} GB/s (read + write)")
PY
