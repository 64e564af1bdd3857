"""`clusterforge check` in every output format against a bare libyaml compose of the same file, side by side.

    python benchmarks/formats.py                       # the 100,000-GPU hall on QM9700, 5 rounds
    python benchmarks/formats.py --file hall.yaml --repeats 9

The default hall (`generate.py --gpus 100000 --switch qm9700`) fails with one error (NET-001) and warns
4,168 times (4,167 racks at PWR-002, PWR-003 once): what a report of many near-identical findings costs in
each format; the last row checks the same hall on Q3400 (it passes with 3 findings), the cost of checking
without the findings. Every figure is a whole process from start to exit, the median of the rounds; each
round runs the compose and every format in turn, starting one later each round, so load on a shared machine
hits each alike. `-f github` runs with GITHUB_STEP_SUMMARY set to a scratch file, as in CI, so its summary
table is timed too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from run import COMPOSE, ENV, HERE, PY

FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")
REFERENCE = "json, same hall on Q3400 (3 findings)"


def timed(cmd: list[str], env: dict[str, str], out: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, exit code) of one child process, its stdout written to `out`. CPU time (user
    + system, from the kernel's accounting of the child) moves less than wall time when others share the
    machine."""
    with out.open("wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, proc.returncode


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, help="a blueprint (default: generate the 100,000-GPU QM9700 hall)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--formats", nargs="+", default=list(FORMATS))
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="cf-formats-"))
    try:
        path = args.file
        if path is None:
            path = folder / "hall-100k-qm9700.yaml"
            subprocess.run([PY, str(HERE / "generate.py"), "--gpus", "100000", "--switch", "qm9700", "-o", str(path)],
                           check=True)
        subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "clusterforge")], check=True, env=ENV,
                       stdout=subprocess.DEVNULL)
        summary = folder / "step-summary.md"
        cmds = {"compose": [*COMPOSE, str(path)]}
        cmds |= {f: [PY, "-m", "clusterforge.cli.main", "check", "-f", f, str(path)] for f in args.formats}
        if args.file is None:  # the same hall on Q3400 passes with 3 findings: what the findings themselves cost
            reference = folder / "hall-100k-q3400.yaml"
            subprocess.run([PY, str(HERE / "generate.py"), "--gpus", "100000", "--switch", "q3400", "-o",
                            str(reference)], check=True)
            cmds[REFERENCE] = [PY, "-m", "clusterforge.cli.main", "check", "-f", "json", str(reference)]
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        cpus: dict[str, list[float]] = {name: [] for name in cmds}
        codes: dict[str, int] = {}
        names = list(cmds)
        for round_ in range(args.repeats):  # each round starts one command later: no command always goes first
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                cmd = cmds[name]
                env = ENV | {"GITHUB_STEP_SUMMARY": str(summary)} if name == "github" else ENV
                if name == "github":
                    summary.unlink(missing_ok=True)
                wall, cpu, codes[name] = timed(cmd, env, folder / f"out-{name}")
                walls[name].append(wall)
                cpus[name].append(cpu)
        compose, compose_cpu = statistics.median(walls["compose"]), statistics.median(cpus["compose"])
        print(f"{path.name}: {len(path.read_text().splitlines()):,} lines, {path.stat().st_size / 1e6:.2f} MB; "
              f"libyaml compose {compose:.2f} s, {compose_cpu:.2f} s CPU (medians of {args.repeats})\n")
        print("| format | check (s) | check / compose | check CPU (s) | CPU / compose CPU | lines written | exit |")
        print("|---|---|---|---|---|---|---|")
        for name in [*args.formats, *([REFERENCE] if REFERENCE in cmds else [])]:
            wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
            lines = len((folder / f"out-{name}").read_bytes().splitlines())
            print(f"| {name} | {wall:.2f} | {wall / compose:.2f} | {cpu:.2f} | {cpu / compose_cpu:.2f} | {lines:,} | "
                  f"{codes[name]} |")
        if summary.exists():
            print(f"\n`-f github` wrote a step summary of {len(summary.read_text().splitlines()):,} lines")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
