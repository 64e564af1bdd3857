"""Scale benchmark: `clusterforge check` against a bare libyaml parse of the same file, side by side.

    python benchmarks/run.py                 # 1k, 10k, 100k GPUs, 3 repeats, markdown table on stdout
    python benchmarks/run.py --sizes 100000 --repeats 5

Every figure is a whole process from start to exit (what a CI job pays), the median of the repeats,
with peak RSS from the kernel's accounting of each child. Ratios compare runs made side by side, so a
busy shared machine moves both sides alike.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
CLI = [PY, "-m", "clusterforge.cli.main"]
COMPOSE = [PY, "-c", "import sys, yaml; yaml.compose(open(sys.argv[1]), Loader=yaml.CSafeLoader)"]


# Children run as an installed tool does: pip writes bytecode at install time, so a user's `check` never compiles
# its sources. Where the environment forbids bytecode (PYTHONDONTWRITEBYTECODE), the package is compiled once
# up front and the children may read it; otherwise every run would also pay ~60 ms of compiling.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def side_by_side(cmds: list[list[str]], repeats: int) -> list[tuple[float, float, int]]:
    """Run the commands in turn, `repeats` rounds, so load on a shared machine hits each alike.

    Returns (median wall seconds, peak RSS MiB, last exit code) per command."""
    runs: list[list[tuple[float, float, int]]] = [[] for _ in cmds]
    for _ in range(repeats):
        for i, cmd in enumerate(cmds):
            runs[i].append(timed(cmd))
    return [(statistics.median(r[0] for r in rs), max(r[1] for r in rs), rs[-1][2]) for rs in runs]


def generate(gpus: int, compact: bool, folder: Path) -> Path:
    path = folder / f"hall-{gpus}{'-compact' if compact else ''}.yaml"
    args = [PY, str(HERE / "generate.py"), "--gpus", str(gpus), "-o", str(path)]
    subprocess.run(args + (["--compact"] if compact else []), check=True)
    return path


def nodename_lines(out: Path) -> int | None:
    conf = out / "slurm" / "slurm.conf"
    if not conf.exists():
        return None
    return sum(1 for line in conf.read_text().splitlines() if line.startswith("NodeName="))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-render", action="store_true", help="skip the render measurements")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="cf-bench-"))
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "clusterforge")], check=True, env=ENV,
                   stdout=subprocess.DEVNULL)
    render = not args.no_render and subprocess.run([*CLI, "render", "--help"], capture_output=True).returncode == 0
    rows = []
    checks: dict[int, float] = {}
    try:
        for gpus in args.sizes:
            for compact in (False, True):
                path = generate(gpus, compact, folder)
                lines = len(path.read_text().splitlines())
                size = path.stat().st_size / 1e6
                out = folder / f"out-{gpus}-{compact}"
                cmds = [[*COMPOSE, str(path)], [*CLI, "check", str(path)]]
                if render:
                    cmds.append([*CLI, "render", str(path), "-o", str(out)])
                results = side_by_side(cmds, args.repeats)
                (compose, _, _), (check, check_rss, code) = results[0], results[1]
                if not compact:
                    checks[gpus] = check
                row = {"gpus": gpus, "form": "compact" if compact else "full", "lines": lines, "mb": size,
                       "compose": compose, "check": check, "ratio": check / compose, "rss": check_rss, "exit": code}
                if render:
                    wall, rss, rcode = results[2]
                    row.update(render=wall, render_ratio=wall / check, render_rss=rss, nodename=nodename_lines(out),
                               render_exit=rcode)
                rows.append(row)
                print(f"{gpus:>7} GPUs {row['form']:>7}: {lines:>6} lines {size:.2f} MB  compose {compose:.2f} s  "
                      f"check {check:.2f} s ({check / compose:.2f}x, {check_rss:.0f} MiB, exit {code})"
                      + (f"  render {row['render']:.2f} s ({row['render_ratio']:.2f}x check, "
                         f"{row['nodename']} NodeName lines)" if render else ""), file=sys.stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    head = "| GPUs | form | lines | MB | libyaml compose (s) | check (s) | check / compose | check peak RSS (MiB) |"
    sep = "|---|---|---|---|---|---|---|---|"
    if render:
        head += " render (s) | render / check | NodeName lines |"
        sep += "---|---|---|"
    print(head)
    print(sep)
    for r in rows:
        line = (f"| {r['gpus']:,} | {r['form']} | {r['lines']:,} | {r['mb']:.2f} | {r['compose']:.2f} | "
                f"{r['check']:.2f} | {r['ratio']:.2f} | {r['rss']:.0f} |")
        if render:
            line += f" {r['render']:.2f} | {r['render_ratio']:.2f} | {r['nodename']} |"
        print(line)
    sizes = sorted(checks)
    for small, big in itertools.pairwise(sizes):
        print(f"\ngrowth {small:,} → {big:,} GPUs: check time × {checks[big] / checks[small]:.1f} "
              f"for × {big // small} the size")


if __name__ == "__main__":
    main()
