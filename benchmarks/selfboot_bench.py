"""What a node costs the control host when nodes configure themselves (`lab up --boot self`), against the push path.

    sudo .venv/bin/python benchmarks/selfboot_bench.py [--nodes 3 9 17 33] [--push]

For each size: `lab up --nodes N` to the first srun, its wall time, and the control host's CPU: clusterforge and
every process it waits for (podman, ssh, Ansible with --push), from the kernel's accounting of reaped children
(`RUSAGE_CHILDREN`); then each node's own boot-phase time and step count from its report. The control host's CPU
per added node is the difference between two sizes over the nodes added. Needs the images built (run `lab up
--boot self` once first: the base image, the repository and the baked image are not what is measured). Prints
markdown rows with the machine's load average at the start.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NAME = "cf-bench-boot"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cf(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "clusterforge", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if check and proc.returncode != 0:
        raise SystemExit(f"clusterforge {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def boot_reports() -> list[tuple[int, int]]:
    """(seconds, steps) of every node's boot phase, from the shared volume's reports."""
    from clusterforge.lab.paths import LabPaths
    from clusterforge.lab.selfboot import parse_status, status_dir

    folder = status_dir(LabPaths.of(NAME))
    found = [parse_status(path.name, path.read_text()) for path in sorted(folder.iterdir())]
    return [(b.seconds, b.tasks) for b in found if b.ok]


def measure(nodes: int, boot: str) -> tuple[float, float, list[tuple[int, int]]]:
    cf("lab", "down", "--name", NAME, check=False)
    before = children_cpu()
    started = time.monotonic()
    cf("lab", "up", "--name", NAME, "--nodes", str(nodes), "--boot", boot)
    wall = time.monotonic() - started
    cpu = children_cpu() - before
    reports = boot_reports() if boot == "self" else []
    cf("lab", "down", "--name", NAME, check=False)
    return wall, cpu, reports


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, nargs="+", default=[3, 9, 17, 33])
    parser.add_argument("--push", action="store_true", help="measure the SSH push path too, at the same sizes")
    args = parser.parse_args()
    print("| boot | nodes | load (1 min) | wall s | control-host CPU s | per node s | node boot s (median, max) "
          "| steps per node |")
    print("|---|---|---|---|---|---|---|---|")
    for boot in ("self", "push") if args.push else ("self",):
        first: tuple[int, float] | None = None
        for nodes in args.nodes:
            load = os.getloadavg()[0]
            wall, cpu, reports = measure(nodes, boot)
            per_node = "-" if first is None else f"{(cpu - first[1]) / (nodes - first[0]):.2f}"
            first = first or (nodes, cpu)
            seconds = [s for s, _ in reports]
            steps = sorted({t for _, t in reports})
            node_boot = f"{statistics.median(seconds):.0f}, {max(seconds)}" if seconds else "-"
            print(f"| {boot} | {nodes} | {load:.2f} | {wall:.0f} | {cpu:.1f} | {per_node} | {node_boot} | "
                  f"{', '.join(map(str, steps)) or '-'} |", flush=True)


if __name__ == "__main__":
    main()
