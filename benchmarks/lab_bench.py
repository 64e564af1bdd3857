"""Measure the lab: `lab up` to the first srun, a re-provision that changes nothing, memory, 3 and 9 nodes.

    sudo .venv/bin/python benchmarks/lab_bench.py [--nodes 3 9] [--runs 1]

Needs the images built (run `clusterforge lab up` once first: the base image, the local repository and the
baked image are not what is measured). Prints one markdown row per measurement, with the machine's load
average at the start, since on a shared machine other work changes the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def used_bytes() -> int:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) * 1024


class Peak(threading.Thread):
    """Samples the machine's used memory every 0.25 s."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = used_bytes()
        self.running = True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, used_bytes())
            time.sleep(0.25)


def cf(*args: str) -> tuple[float, str]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "clusterforge", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"clusterforge {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc.stdout


def changed(output: str) -> int:
    return sum(int(n) for n in re.findall(r"^\S+\s+: ok=\d+\s+changed=(\d+)", output, re.M))


FLOOR_TASKS = 60


def floor_seconds(name: str, limit: str | None) -> float:
    """ansible-playbook with the lab's settings (Mitogen) running FLOOR_TASKS tasks of `command: true` on the
    lab's hosts: what a check task costs at the least, the floor under a run with nothing to change."""
    import tempfile

    from clusterforge.files.checkout import project_root
    from clusterforge.lab.cluster import ansible_env
    from clusterforge.lab.paths import LabPaths
    from clusterforge.provision.runner import mitogen_env

    paths = LabPaths.of(name)
    tasks = [{"name": f"noop {i}", "ansible.builtin.command": "true", "changed_when": False}
             for i in range(FLOOR_TASKS)]
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as playbook:
        playbook.write(json.dumps([{"hosts": "all", "gather_facts": False, "tasks": tasks}]))
        playbook.flush()
        env = {**os.environ, **mitogen_env(), **ansible_env(paths),
               "ANSIBLE_CONFIG": str(project_root() / "ansible.cfg"),
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        command = ["ansible-playbook", "-e", f"@{paths.extra_vars}", "-i",
                   str(paths.render / "inventory" / "hosts.yml"), *(["--limit", limit] if limit else []),
                   playbook.name]
        started = time.monotonic()
        subprocess.run(command, cwd=project_root(), env=env, capture_output=True, check=True)
        return time.monotonic() - started


def measure(nodes: int, name: str) -> list[str]:
    load = os.getloadavg()[0]
    cf("lab", "down", "--name", name)
    baseline = used_bytes()
    peak = Peak()
    peak.start()
    up_s, up_out = cf("lab", "up", "--nodes", str(nodes), "--name", name)
    peak.running = False
    steps = re.search(r"is up in [\d.]+s \((.*)\)", " ".join(up_out.split()))
    time.sleep(5)
    rest = used_bytes() - baseline
    prov_s, prov_out = cf("lab", "provision", "--name", name)
    linear_s, linear_out = cf("lab", "provision", "--linear", "--name", name)
    one_host_s, all_hosts_s = floor_seconds(name, "ctl-0001"), floor_seconds(name, None)
    per_host_task_ms = (all_hosts_s - one_host_s) / (FLOOR_TASKS * (nodes - 1)) * 1000
    down_s, _ = cf("lab", "down", "--name", name)
    gib = 1024**3
    return [
        f"| {nodes} | lab up → first srun | {up_s:.1f} s | {steps.group(1) if steps else ''} | load {load:.1f} |",
        f"| {nodes} | re-provision (Mitogen) | {prov_s:.1f} s | changed={changed(prov_out)} | |",
        f"| {nodes} | re-provision (plain Ansible, --linear) | {linear_s:.1f} s | changed={changed(linear_out)} | |",
        f"| {nodes} | {FLOOR_TASKS} no-op tasks (Mitogen) | {one_host_s:.1f} s on 1 host, {all_hosts_s:.1f} s on "
        f"{nodes} | {per_host_task_ms:.0f} ms per task and host added | |",
        f"| {nodes} | memory | peak +{(peak.peak - baseline) / gib:.2f} GiB | at rest +{rest / gib:.2f} GiB | |",
        f"| {nodes} | lab down | {down_s:.1f} s | | |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, nargs="+", default=[3, 9])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print("| nodes | what | time / size | detail | note |\n|---|---|---|---|---|")
    for _ in range(args.runs):
        for nodes in args.nodes:
            for row in measure(nodes, f"cf-bench-{os.getpid()}"):
                print(row, flush=True)


if __name__ == "__main__":
    main()
