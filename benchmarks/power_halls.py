"""`clusterforge check` on a 100,000-GPU hall with a distributed-redundant power topology, against the same hall
without one, each timed from one or more source trees side by side.

    python benchmarks/power_halls.py --trees /path/to/old-checkout /path/to/new-checkout --repeats 7

The plain hall is `generate.py`'s (4,167 racks of three DGX H100, A/B feeds, no panels). The topology hall adds,
per row of 24 racks, a ring of three 415 V 3φ 700 A panels (rack k's A cord on panel k mod 3, its B cord on the
next), 522 panels in all; panel i of every six rows is fed by one UPS (87 of 3,000 kW), and every UPS by both of
two utility feeds: 611 elements whose loss PWR-002 and PWR-006 judge one at a time. The design passes: with a
panel lost its ring partners carry 8 racks whole and 8 halved, 367.2 kW of 402.5 kW usable. The panels hall is
the topology hall without its UPS and utility feeds, which a tree from before power sources can read (it fails
there: PWR-006 added each rack's two cords at its whole load, 489.6 kW a panel).

Each tree's `clusterforge` runs as `python -m clusterforge.cli.main` from inside that tree (the working directory
comes first on `sys.path`). Figures are medians of whole processes, run in turn so a busy machine hits each
alike; the CPU time (user and system) of each child is given beside its wall time.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import GPUS_PER_NODE, full  # noqa: E402  (a script beside this one)

ROWS_PER_UPS = 6
# children run as an installed tool does, from bytecode compiled once up front (as run.py does)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def with_topology(lines: list[str], upstream: bool = True) -> list[str]:
    """The full hall's lines with a panel ring per row, a UPS per panel position of every six rows and two
    utility feeds (`upstream`; without it the panels alone, as a tree from before power sources reads them);
    each feed's cord lands on its row's panel."""
    out: list[str] = []
    rows = 0
    rack = -1
    for line in lines:
        if line.startswith("    - name: r"):
            rows += 1
            rack = -1
        elif line.startswith("        - name: r"):
            rack += 1
        out.append(line)
        if line.strip() == "phase: 3" and rack >= 0:
            side = 0 if out[-4].strip() == "side: A" else 1
            out.append(f"              panel: p{rows - 1:03d}-{(rack + side) % 3}")
    panels = ["  panels:"]
    for r in range(rows):
        fed = f", fed_by: [ups-{r // ROWS_PER_UPS:02d}-{{i}}]" if upstream else ""
        panels += [f"    - {{name: p{r:03d}-{i}, voltage: 415, amps: 700, phase: 3{fed.format(i=i)}}}"
                   for i in range(3)]
    sources = ["  power_sources:", "    - {name: util-1, kind: utility}", "    - {name: util-2, kind: utility}"]
    sources += [f"    - {{name: ups-{g:02d}-{i}, kw: 3000, fed_by: [util-1, util-2]}}"
                for g in range(math.ceil(rows / ROWS_PER_UPS)) for i in range(3)]
    at = out.index("  rows:")
    return out[:at] + panels + (sources if upstream else []) + out[at:]


def timed(tree: Path, blueprint: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of one check: the CPU time of the child (user and system) moves less
    than its wall time when other work shares the machine."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "clusterforge.cli.main", "check", str(blueprint)], cwd=tree,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, default=100_000)
    parser.add_argument("--trees", type=Path, nargs="+", default=[HERE.parent])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("-o", "--output", type=Path, help="only write the topology hall here")
    args = parser.parse_args(argv)
    lines = full(math.ceil(args.gpus / GPUS_PER_NODE))
    if args.output:
        args.output.write_text("\n".join(with_topology(lines)) + "\n")
        return
    for tree in args.trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "clusterforge")], check=True, env=ENV,
                       stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        texts = {"plain": lines, "panels": with_topology(lines, upstream=False), "topology": with_topology(lines)}
        halls = {name: Path(tmp) / f"{name}.yaml" for name in texts}
        for name, text in texts.items():
            halls[name].write_text("\n".join(text) + "\n")
        runs: dict[tuple[str, Path], list[tuple[float, float, int]]] = {}
        for _ in range(args.repeats):
            for name, hall in halls.items():
                for tree in args.trees:
                    runs.setdefault((name, tree), []).append(timed(tree, hall))
    print("| hall | tree | wall (s, median) | CPU (s, median) | CPU min (s) | exit |")
    print("|---|---|---|---|---|---|")
    for (name, tree), times in runs.items():
        cpu = [c for _, c, _ in times]
        print(f"| {name} | {tree} | {statistics.median(w for w, _, _ in times):.3f} | {statistics.median(cpu):.3f} "
              f"| {min(cpu):.3f} | {times[-1][2]} |")


if __name__ == "__main__":
    main()
