"""`clusterforge health diag`: a DCGM diagnostic of a chosen level on chosen nodes, run through SLURM so that it
gets the nodes to itself, with one verdict per node.

Each node runs the health check's `--diag LEVEL --json` mode (roles/health), which prints one JSON object: `node`
(required, the node's own name), `status` (required: pass, fail or skipped), `level` (1 to 4), `seconds`,
`detail` (docs/operations.md). Levels and their durations are DCGM's: 1 takes seconds, 2 about two minutes, 3
about fifteen, 4 up to two hours and more; 3 and 4 need the GPUs idle, hence `--exclusive`.

A verdict is the one the node's own task printed, as SLURM labels it (node_lines.py, own_results.py): a node that
printed several results, one naming another node or one that is not readable fails with that said; the node it
named keeps its own verdict. `--drain` is the node's own health script draining its own node, never another.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.operations.node_lines import TaskOutput
from clusterforge.operations.own_results import BadField, Own, live, node_and_status
from clusterforge.operations.own_results import read_saved as read_own
from clusterforge.operations.srun import per_node_srun

HEALTH_SCRIPT = "/usr/local/sbin/clusterforge-health"  # health_script in roles/health/defaults/main.yml
TIME_LIMIT_MIN = {1: 10, 2: 30, 3: 90, 4: 240}  # generous: DCGM's durations plus the node's own variance
FAILED = ("fail", "missing")
MAX_DETAIL = 500


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    status: str  # pass, fail, skipped, missing (the node printed nothing)
    seconds: float
    detail: str
    level: int | None = None


def srun_command(level: int, nodes: Sequence[str], partition: str | None = None, reservation: str | None = None,
                 drain: bool = False) -> list[str]:
    """The srun argv: one task on each node, labelled, the nodes to itself, a time limit by level."""
    argv = per_node_srun(nodes, "clusterforge-diag", TIME_LIMIT_MIN[level], partition, reservation,
                         "--kill-on-bad-exit=0")
    argv += [HEALTH_SCRIPT, "--diag", str(level), "--json"] + (["--drain"] if drain else [])
    return argv


def verdict(data: Any) -> NodeVerdict:
    """A node's object as its verdict; `BadField` names the first field that is not as the script prints it."""
    node, status = node_and_status(data)
    level = data.get("level")
    if level is not None and (isinstance(level, bool) or level not in TIME_LIMIT_MIN):
        raise BadField("level", f"expected a diagnostic level 1 to 4, got {level!r}"[:200])
    seconds = data.get("seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds < 0:
        raise BadField("seconds", f"expected a non-negative number, got {seconds!r}"[:200])
    detail = data.get("detail", "")
    if not isinstance(detail, str):
        raise BadField("detail", f"expected text, got {type(detail).__name__}")
    return NodeVerdict(node, status, float(seconds), detail[:MAX_DETAIL], level)


def _verdicts(own: list[Own[NodeVerdict]]) -> list[NodeVerdict]:
    return [o.result if o.result is not None else NodeVerdict(o.node, "fail", 0.0, o.problem[:MAX_DETAIL])
            for o in own]


def read_output(printed: dict[str, TaskOutput], order: Sequence[str]) -> list[NodeVerdict]:
    """The verdicts of srun's output, by the node SLURM ran each task on (node_lines.by_node)."""
    return _verdicts(live(printed, order, verdict))


def read_saved(lines: Iterable[str], file: str) -> list[NodeVerdict]:
    """The verdicts of a saved file (`NODE: {...}` lines, own_results.py), strictly: a bad line is exit 2."""
    return _verdicts(read_own(lines, file, verdict))


def with_missing(found: list[NodeVerdict], expected: list[str]) -> list[NodeVerdict]:
    """One verdict per expected node, in the order asked for (`missing` where it printed nothing), then the nodes
    that answered without being asked for."""
    by_node = {v.node: v for v in found}
    asked = set(expected)
    return [by_node.get(node) or NodeVerdict(node, "missing", 0.0, "no result: the node did not run the diagnostic")
            for node in expected] + [v for v in found if v.node not in asked]


def check_level(level: int) -> int:
    if level not in TIME_LIMIT_MIN:
        raise ClusterforgeError(Problem(f"level {level} is not a diagnostic level", path="--level",
                                        hint="1 (seconds), 2 (~2 min), 3 (~15 min) or 4 (hours)"))
    return level
