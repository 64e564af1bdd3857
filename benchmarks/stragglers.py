"""How long `clusterforge health perf` takes to judge a fleet, and how much memory: N nodes × 8 GPUs of results
as the health check's `--perf --json` prints them (seeded normal spread, a few planted outliers), saved as `--save`
writes them (`NODE: {...}`), read from a file, analysed against the fleet and shown as text and JSON.

`python benchmarks/stragglers.py [--nodes 1250 12500 100000]` prints a Markdown table: seconds to read the lines,
to analyse, to render, in all, and the peak memory Python allocated (tracemalloc, a second run, so the timing runs
without its overhead). The srun itself is not measured: it is the nodes' own time, seconds each, in parallel.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.cli.perf_view import as_json, text  # noqa: E402
from clusterforge.operations.perf_run import read_saved  # noqa: E402
from clusterforge.operations.stragglers import Peak, analyse, normalized  # noqa: E402
from clusterforge.policies.config import PerfTolerances  # noqa: E402

H100 = "NVIDIA H100 80GB HBM3"
PEAKS = {normalized(H100): Peak("H100-SXM5", 989.0, 3350.0)}


def write_fleet(path: Path, nodes: int, seed: int = 1) -> int:
    """N nodes of 8 GPUs, ±3 % spread; every 1,000th node has a GPU 20 % slow. Returns the planted count."""
    rng = random.Random(seed)
    planted = 0
    with path.open("w") as out:
        for n in range(1, nodes + 1):
            slow = n % 1000 == 0
            planted += slow
            gpus = [{"index": i, "name": H100,
                     "gemm_tflops": round(793.1 * rng.gauss(1, 0.01) * (0.8 if slow and i == 3 else 1), 1),
                     "hbm_gbps": round(3030.5 * rng.gauss(1, 0.01), 1), "checksum": "9f2c0a5b7e1d3c48",
                     "checksum_ok": True, "bad_rows": 0, "bad_cols": 0, "seconds": 1.4, "status": "pass"}
                    for i in range(8)]
            node = f"gpu-{n:06d}"  # the saved format (`--save`): `NODE: {...}`
            out.write(f"{node}: " + json.dumps({"node": node, "status": "pass", "seconds": 2.1, "gpus": gpus,
                                                "nccl_busbw_gbps": None, "codes": [], "detail": ""}) + "\n")
    return planted


def run(path: Path) -> tuple[float, float, float, int]:
    """(read, analyse, render) seconds and the outliers found."""
    started = time.perf_counter()
    with path.open() as lines:
        results = read_saved(lines, str(path))
    read = time.perf_counter()
    report = analyse(results, PEAKS, PerfTolerances())
    analysed = time.perf_counter()
    text(report, PerfTolerances(), [])
    as_json(report, PerfTolerances(), [], None, 0.0)
    rendered = time.perf_counter()
    return read - started, analysed - read, rendered - analysed, len(report.outliers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1_250, 12_500, 100_000])
    args = parser.parse_args()
    print("| nodes | GPUs | file MB | read s | analyse s | render s | total s | peak MiB | outliers (planted) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in args.nodes:
            path = Path(tmp) / f"fleet-{nodes}.jsonl"
            planted = write_fleet(path, nodes)
            read, analysed, rendered, found = run(path)
            tracemalloc.start()
            run(path)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            size = path.stat().st_size / 1e6
            print(f"| {nodes:,} | {nodes * 8:,} | {size:,.0f} | {read:.2f} | {analysed:.2f} | {rendered:.2f} | "
                  f"{read + analysed + rendered:.2f} | {peak / 2**20:,.0f} | {found} ({planted}) |", flush=True)


if __name__ == "__main__":
    main()
