"""How long the health check's fast tier takes on an 8-GPU node, before and after the clock and PCIe checks.

`python benchmarks/health_fast_tier.py [--before REF] [--repeats 10] [--smi-latency 0 0.05]` runs the script of git
revision REF (default: the last one before the checks were added) and the working tree's, on the same stand-in
node: nvidia-smi answering for 8 H100s (from tests/fixtures/nvidia-smi, each answer after --smi-latency seconds,
since a real nvidia-smi takes tens of milliseconds per query on 8 GPUs), the driver file, a kernel log, SLURM's
sinfo/scontrol answering at once, the GPU checks of an HGX H100 node (driver, Xid, ECC, row remap, fabric) and a
disk. It times `--prolog` and the periodic check (DCGM, NCCL and EFA off: they are not what changed) and prints a
Markdown table of the median and the slowest run in milliseconds. The queries run in parallel, so the new one adds
the script's own parsing, not another nvidia-smi's time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "roles/health/files/clusterforge-health"
FIXTURE = ROOT / "tests" / "fixtures" / "nvidia-smi" / "h100-pcie-vm-580"
# the commit before the clock and PCIe checks (the parent of the one that added them)
BEFORE = "2d26114^"
SPEED = ("--query-gpu=index,clocks_event_reasons.active,clocks_event_reasons.gpu_idle,clocks_event_reasons.hw_slowdown,"
         "clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown,"
         "clocks_event_reasons.sw_thermal_slowdown,pcie.link.gen.gpucurrent,pcie.link.gen.max,pcie.link.width.current,"
         "pcie.link.width.max --format=csv,noheader")


def node(folder: Path, latency: float) -> tuple[dict[str, str], Path]:
    """The stand-in 8-GPU node: PATH with the fakes, and its health.conf (clock and PCIe checks on)."""
    answers = folder / "answers"
    answers.mkdir()
    gpus = range(8)
    files = {
        "--query-gpu=name --format=csv,noheader": "NVIDIA H100 80GB HBM3\n" * 8,
        "--query-gpu=index,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,"
        "ecc.errors.corrected.volatile.total --format=csv,noheader": "".join(f"{i}, 0, 0, 0\n" for i in gpus),
        "--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,"
        "remapped_rows.pending,remapped_rows.failure --format=csv,noheader":
            "".join(f"00000000:{0x18 + i:02x}:00.0, 0, 0, No, No\n" for i in gpus),
        "--query-gpu=index,fabric.state,fabric.status --format=csv,noheader":
            "".join(f"{i}, Completed, Success\n" for i in gpus),
        "--query-gpu=index,gpu_recovery_action --format=csv,noheader": "".join(f"{i}, None\n" for i in gpus),
        SPEED: "".join(f"{i}, 0x0000000000000001, Active, Not Active, Not Active, Not Active, Not Active, "
                       "5, 5, 16, 16\n" for i in gpus),
    }
    cases = ""
    for number, (args, text) in enumerate(files.items()):
        (answers / str(number)).write_text(text)
        cases += f'  "{args}") f={number} ;;\n'
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    fakes = {
        "nvidia-smi": f'case "$*" in\n{cases}  *) exit 99 ;;\nesac\nsleep {latency}\ncat "{answers}/$f"\n',
        "sinfo": 'echo "idle|none"\n', "scontrol": "exit 0\n", "hostname": "echo gpu-0001\n",
    }
    for name, body in fakes.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    (folder / "kmsg").write_text("[ 1.0] nothing to see\n")
    (folder / "prom").mkdir()
    conf = folder / "health.conf"
    conf.write_text("\n".join([
        "CHECK_GPUS=1", "GPU_COUNT=8", "GPU_MODEL=H100-SXM5", "DRIVER_VERSION=580.159.04",
        f"NVIDIA_VERSION_FILE={FIXTURE / 'version.txt'}", "CHECK_XID=1", f"KERNEL_LOG_FILE={folder / 'kmsg'}",
        "CHECK_ECC=1", "CHECK_REMAP=1", "CHECK_FABRIC=1", "CHECK_NVLINK=0", "CHECK_NCCL=0", "CHECK_DISK=1",
        f"DISK_PATHS={folder}", "DISK_MIN_FREE_PCT=1", "DCGM_DIAG_LEVEL=0", f"TEXTFILE_DIR={folder / 'prom'}",
        "CHECK_GPU_CLOCKS=1", "CHECK_PCIE=1"]) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "SLURMD_NODENAME"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env, conf


def timed(script: Path, mode: list[str], conf: Path, env: dict[str, str], repeats: int) -> list[float]:
    runs = []
    for _ in range(repeats + 1):  # the first run warms the page cache, and is dropped
        start = time.perf_counter()
        result = subprocess.run(["bash", str(script), *mode, "--conf", str(conf)], capture_output=True, text=True,
                                env=env, check=False)
        runs.append((time.perf_counter() - start) * 1000)
        if result.returncode != 0:
            sys.exit(f"{script} {mode} failed:\n{result.stdout}{result.stderr}")
    return runs[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="git revision of the script to compare with")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--smi-latency", type=float, nargs="*", default=[0.0, 0.05],
                        help="seconds each stand-in nvidia-smi query takes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "clusterforge-health.before"
        old.write_text(subprocess.run(["git", "show", f"{args.before}:{SCRIPT}"], cwd=ROOT, capture_output=True,
                                      text=True, check=True).stdout)
        print("| nvidia-smi latency (s) | mode | script | median (ms) | slowest (ms) | runs |")
        print("|---|---|---|---|---|---|")
        for latency in args.smi_latency:
            folder = Path(tmp) / f"node-{latency}"
            folder.mkdir()
            env, conf = node(folder, latency)
            for mode in (["--prolog"], []):
                for label, script in ((f"before ({args.before})", old), ("after", ROOT / SCRIPT)):
                    runs = timed(script, mode, conf, env, args.repeats)
                    print(f"| {latency:g} | {mode[0] if mode else 'periodic'} | {label} | "
                          f"{statistics.median(runs):.0f} | {max(runs):.0f} | {len(runs)} |")


if __name__ == "__main__":
    main()
