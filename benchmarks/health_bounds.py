"""How fast the `health` commands read hostile and large node output, and what the bounds cost.

`python benchmarks/health_bounds.py [--old-up-to 255000] [--nodes 12500]` prints Markdown tables:

1. `health allreduce`'s parse of one line that repeats `Job step aborted` (85 KB, 255 KB, 680 KB, 2 MB): the
   pattern it used to search with (`DUE TO TIME LIMIT|time limit exceeded|Job step aborted.*time`, scanning to the
   end of the line from every match) beside the plain searches that replaced it. The old pattern is only timed up
   to `--old-up-to` bytes: past that it takes minutes.
2. Whole processes, as a user runs them: `clusterforge health allreduce --from FILE` on the table alone (what
   start-up costs), on a 2 MB line (refused at the 1 MiB line bound, exit 2) and on a line just under 1 MiB (read,
   judged), and `clusterforge health perf --from` on a saved file with a 2 MB line.
3. srun's labelled output of N nodes, each printing an 8-GPU perf result (~1.6 KB, so two labelled pieces each,
   interleaved as srun interleaves them), read back per node (node_lines.by_node) and judged one result per node
   (perf_run.read_output); and a 2 MB hostile line of quotes, escapes and braces through the same scanner.
Times are medians of `--repeats` runs (in-process ones) or of 3 (processes), on whatever machine runs it.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.operations.allreduce import parse  # noqa: E402
from clusterforge.operations.node_lines import by_node, by_task  # noqa: E402
from clusterforge.operations.perf_run import read_output  # noqa: E402
from tests.test_health_labels import perf_object, srun_label  # noqa: E402

OLD_TIME_LIMIT = re.compile(r"DUE TO TIME LIMIT|time limit exceeded|Job step aborted.*time", re.IGNORECASE)
TABLE = "\n".join(["# size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
                   "  8589934592 2147483648 float sum -1 47535 180.71 338.82 0 47743 179.92 337.35 0",
                   "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 338.09", ""])


def median_time(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def aborted(size: int) -> str:
    return ("Job step aborted " * (size // 17 + 1))[:size]


def patterns(old_up_to: int, repeats: int) -> None:
    print("| line | old pattern (s) | plain searches, whole parse (s) |")
    print("|---:|---:|---:|")
    for size in (85_000, 255_000, 680_000, 2_000_000):
        line = aborted(size)
        old = f"{median_time(lambda: OLD_TIME_LIMIT.search(line), 1):.2f}" if size <= old_up_to else "not run"  # noqa: B023
        new = median_time(lambda: parse(line), repeats)  # noqa: B023 (called at once, in this iteration)
        print(f"| {size:,} B | {old} | {new:.4f} |", flush=True)


def processes(tmp: Path) -> None:
    files = {"allreduce, the table alone (start-up and imports)": ("allreduce", TABLE),
             "allreduce, 2 MB line (refused)": ("allreduce", TABLE + aborted(2_000_000) + "\n"),
             "allreduce, 1 MiB - 1 KiB line (read)": ("allreduce", TABLE + aborted((1 << 20) - 1024) + "\n"),
             "perf, saved file with a 2 MB line (refused)": ("perf", "gpu-0001: " + "{" * 2_000_000 + "\n")}
    print("| command | exit | seconds (median of 3) |")
    print("|---|---:|---:|")
    for name, (command, text) in files.items():
        path = tmp / f"{command}.in"
        path.write_text(text)
        argv = [sys.executable, "-m", "clusterforge", "health", command, "--from", str(path)]
        argv += ["--min-busbw", "300"] if command == "allreduce" else []
        times, code = [], 0
        for _ in range(3):
            started = time.perf_counter()
            code = subprocess.run(argv, capture_output=True, check=False).returncode
            times.append(time.perf_counter() - started)
        print(f"| `clusterforge health {command} --from FILE`: {name} | {code} | {statistics.median(times):.2f} |",
              flush=True)


def labelled(nodes: int, repeats: int) -> None:
    order = [f"gpu-{n:05d}" for n in range(1, nodes + 1)]
    out = srun_label([perf_object(node) + "\n" for node in order])
    print("| what | MB | seconds | peak MiB |")
    print("|---|---:|---:|---:|")

    def judge() -> object:
        return read_output(by_node(out, order), order)

    seconds = median_time(judge, repeats)
    tracemalloc.start()
    results = judge()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert isinstance(results, list) and len(results) == nodes and all(r.status == "pass" for r in results)
    print(f"| {nodes:,} nodes' labelled srun output, read back and judged per node | {len(out) / 1e6:.1f} | "
          f"{seconds:.2f} | {peak / 2**20:,.0f} |")
    hostile = '0: {"a": "' + '\\"{[' * 500_000 + '"}'
    seconds = median_time(lambda: by_task([hostile], 1), repeats)
    print(f"| one 2 MB labelled line of escaped quotes and braces (cut at the 1 MiB bound) | 2.0 | {seconds:.3f} | - |")
    many = "0: " + "{}" * 1_000_000
    seconds = median_time(lambda: by_task([many], 1), repeats)
    print(f"| one 2 MB labelled line of a million `{{}}` objects (16 read, the rest passed over) | 2.0 | "
          f"{seconds:.3f} | - |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-up-to", type=int, default=255_000, help="time the old pattern up to this line size")
    parser.add_argument("--nodes", type=int, default=12_500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    patterns(args.old_up_to, args.repeats)
    print()
    with tempfile.TemporaryDirectory() as tmp:
        processes(Path(tmp))
    print()
    labelled(args.nodes, args.repeats)


if __name__ == "__main__":
    main()
