"""`clusterforge health diag`: a DCGM diagnostic of a chosen level on chosen nodes, run through SLURM so that it
gets the nodes to itself, with one verdict per node.

Each node runs the health check's `--diag LEVEL --json` mode (roles/health), which prints one JSON object. Levels
and their durations are DCGM's (docs/operations.md): 1 takes seconds, 2 about two minutes, 3 about fifteen, 4 up
to two hours and more; 3 and 4 need the GPUs idle, hence `--exclusive`.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.operations.node_lines import node_objects
from clusterforge.operations.srun import exclusive_srun

HEALTH_SCRIPT = "/usr/local/sbin/clusterforge-health"  # health_script in roles/health/defaults/main.yml
TIME_LIMIT_MIN = {1: 10, 2: 30, 3: 90, 4: 240}  # generous: DCGM's durations plus the node's own variance


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    status: str  # pass, fail, skipped, missing (the node printed nothing)
    seconds: float
    detail: str


def srun_command(level: int, nodes: str, partition: str | None = None, reservation: str | None = None,
                 drain: bool = False) -> list[str]:
    """The srun argv: one task on each node, the nodes to itself, a time limit by level."""
    argv = exclusive_srun(nodes, 1, "clusterforge-diag", TIME_LIMIT_MIN[level], partition, reservation,
                          "--kill-on-bad-exit=0")
    argv += [HEALTH_SCRIPT, "--diag", str(level), "--json"] + (["--drain"] if drain else [])
    return argv


def parse(output: str, expected: list[str]) -> list[NodeVerdict]:
    """One verdict per expected node, from the JSON lines the nodes printed (other lines are srun's own)."""
    found: dict[str, NodeVerdict] = {}
    for data in node_objects(output):
        status = str(data.get("status", "fail"))
        found[data["node"]] = NodeVerdict(data["node"], status if status in ("pass", "fail", "skipped") else "fail",
                                          float(data.get("seconds") or 0.0), str(data.get("detail", ""))[:500])
    return [found.get(node, NodeVerdict(node, "missing", 0.0, "no result: the node did not run the diagnostic"))
            for node in expected] + [v for n, v in sorted(found.items()) if n not in expected]


def check_level(level: int) -> int:
    if level not in TIME_LIMIT_MIN:
        raise ClusterforgeError(Problem(f"level {level} is not a DCGM diagnostic level", path="--level",
                                        hint="1 (seconds), 2 (~2 min), 3 (~15 min) or 4 (hours)"))
    return level
