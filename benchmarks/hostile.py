"""Hostile inputs: time and peak memory of every command on every case of tests/hostile, against the targets.

    python benchmarks/hostile.py            # markdown table on stdout: the slowest and largest runs first
    python benchmarks/hostile.py -k alias   # only the cases whose name contains 'alias'

Each command runs in its own process (as `tests/hostile/test_cases.py` runs them), so a figure is what a CI
job pays for that command on that input: start-up included. The targets: every run under 2 s and 256 MiB.
The test suite holds the memory ceiling, a hang timeout and a guard at twice each case's time in CPU time (a
blow-up); the time targets are measured here, not asserted there.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile import harness  # noqa: E402
from tests.hostile.harness import RUNS, all_cases, exercise  # noqa: E402

TARGET_S = 2.0
TARGET_MIB = 256


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--top", type=int, default=15, help="rows of the slowest runs to show")
    args = parser.parse_args()
    harness.FRESH = True  # a user's command starts a new interpreter: its figures include the start-up
    cases = [c for c in all_cases() if args.k in c.name]
    broken: list[str] = []
    for case in cases:
        with tempfile.TemporaryDirectory() as base:
            broken += exercise(case, Path(base))
    slow = sorted(RUNS, key=lambda r: r.seconds, reverse=True)
    print(f"{len(cases)} cases, {len(RUNS)} runs; broken guarantees: {len(broken)}\n")
    print("| case | command | exit | seconds | CPU seconds | peak RSS (MiB) |\n|---|---|---|---|---|---|")
    for run in slow[: args.top]:
        print(f"| {run.case} | {run.command} | {run.exit} | {run.seconds:.2f} | {run.cpu_seconds:.2f} "
              f"| {run.rss_mib:.0f} |")
    worst_s = max((r.seconds for r in RUNS), default=0.0)
    worst_mib = max((r.rss_mib for r in RUNS), default=0.0)
    over = [r for r in RUNS if r.seconds >= TARGET_S or r.rss_mib > TARGET_MIB]
    print(f"\nslowest run {worst_s:.2f} s (target < {TARGET_S} s), largest {worst_mib:.0f} MiB "
          f"(target ≤ {TARGET_MIB} MiB); runs over a target: {len(over)}")
    for line in broken:
        print(f"BROKEN: {line.splitlines()[0]}")
    return 1 if broken or over else 0


if __name__ == "__main__":
    raise SystemExit(main())
