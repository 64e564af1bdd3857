"""`clusterforge health perf`: the srun that runs the health check's perf tier on every node, and the node's
results read back from the one JSON line each node prints.

Each node runs `clusterforge-health --perf --json` (roles/health): a bf16 GEMM and a device-to-device copy on each
GPU, with a checksum from exact integer arithmetic that every healthy GPU of every model prints the same. The node
cannot tell slow from normal (that takes the fleet: operations/stragglers.py), so nothing here judges speed.

Results come from srun's output, where other lines (srun's own) are skipped, or from a saved file (`--from`),
where every line must be a node's result: a bad line there is an input error at its line, not a guess.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.operations.diag import HEALTH_SCRIPT
from clusterforge.operations.node_lines import node_objects
from clusterforge.operations.srun import exclusive_srun

TIME_LIMIT_MIN = 10  # a GEMM and a copy per GPU take seconds; the rest is SLURM's start
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")  # a name scontrol's NodeName= reads as one node
CHECKSUM = re.compile(r"[0-9a-fA-F]{1,64}\Z")
STATUSES = ("pass", "fail", "skipped")
MAX_GPUS = 1_024  # per node, far above any real host: bounds the work one line can ask for
MAX_TEXT = 500


@dataclass(frozen=True, slots=True)
class GpuResult:
    """One GPU's figures, or its `error` (the test did not run there). Figures the node left out are None."""

    index: int
    name: str
    gemm_tflops: float | None
    hbm_gbps: float | None
    checksum: str | None
    checksum_ok: bool | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class NodeResult:
    """One node's line. `status` is the node's own word (pass, fail, skipped), or `missing` when it printed none."""

    node: str
    status: str
    seconds: float
    gpus: tuple[GpuResult, ...]
    codes: tuple[str, ...] = ()
    detail: str = ""


def srun_command(nodes: str, partition: str | None = None, reservation: str | None = None) -> list[str]:
    """The srun argv: one task on each node, the nodes to itself (a neighbour's job would slow the GEMM)."""
    argv = exclusive_srun(nodes, 1, "clusterforge-perf", TIME_LIMIT_MIN, partition, reservation, "--kill-on-bad-exit=0")
    return [*argv, HEALTH_SCRIPT, "--perf", "--json"]


class _Bad(ValueError):
    """A node line's field that is not what the health script prints: (path, message)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def _text(value: Any, path: str, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise _Bad(path, f"expected text, got {type(value).__name__}")
    return value[:MAX_TEXT]


def _figure(value: Any, path: str) -> float | None:
    """A non-negative finite number, or None where the node left it out."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise _Bad(path, f"expected a non-negative number, got {value!r}"[:200])
    return float(value)


def _gpu(data: Any, path: str) -> GpuResult:
    if not isinstance(data, dict):
        raise _Bad(path, "expected an object")
    index = data.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < MAX_GPUS:
        raise _Bad(f"{path}.index", f"expected a GPU index 0 to {MAX_GPUS - 1}, got {index!r}"[:200])
    name = sys.intern(_text(data.get("name"), f"{path}.name"))
    if "error" in data:
        return GpuResult(index, name, None, None, None, None, _text(data["error"], f"{path}.error") or "error")
    checksum = data.get("checksum")
    if checksum is not None and (not isinstance(checksum, str) or not CHECKSUM.match(checksum)):
        raise _Bad(f"{path}.checksum", f"expected hexadecimal digits, got {checksum!r}"[:200])
    checksum_ok = data.get("checksum_ok")
    if checksum_ok is not None and not isinstance(checksum_ok, bool):
        raise _Bad(f"{path}.checksum_ok", f"expected true or false, got {checksum_ok!r}"[:200])
    return GpuResult(index, name, _figure(data.get("gemm_tflops"), f"{path}.gemm_tflops"),
                     _figure(data.get("hbm_gbps"), f"{path}.hbm_gbps"),
                     sys.intern(checksum.lower()) if checksum is not None else None, checksum_ok)


def node_result(data: Any) -> NodeResult:
    """A node's JSON object as a NodeResult; `_Bad` names the first field that is not as the script prints it."""
    if not isinstance(data, dict):
        raise _Bad("", "expected a JSON object")
    node = data.get("node")
    if not isinstance(node, str) or not NODE_NAME.match(node):
        raise _Bad("node", f"expected a node name of letters, digits, '.', '_' or '-', got {node!r}"[:200])
    status = data.get("status", "fail")
    if status not in STATUSES:
        raise _Bad("status", f"expected one of {', '.join(STATUSES)}, got {status!r}"[:200])
    gpus = data.get("gpus") or []
    if not isinstance(gpus, list) or len(gpus) > MAX_GPUS:
        raise _Bad("gpus", f"expected a list of at most {MAX_GPUS} GPUs")
    codes = data.get("codes") or []
    if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
        raise _Bad("codes", "expected a list of reason codes")
    return NodeResult(node, status, _figure(data.get("seconds"), "seconds") or 0.0,
                      tuple(_gpu(g, f"gpus[{i}]") for i, g in enumerate(gpus)),
                      tuple(c[:64] for c in codes[:20]), _text(data.get("detail"), "detail"))


def read_saved(lines: Iterable[str], file: str) -> list[NodeResult]:
    """Every line of a saved file (`--from`) as a node's result; blank lines are skipped. Every bad line is a
    problem at `file:line` (all of them, so one run shows what to fix)."""
    results: list[NodeResult] = []
    problems: list[Problem] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            results.append(node_result(json.loads(line)))
        except _Bad as bad:
            problems.append(Problem(str(bad), file=file, line=number, path=bad.path))
        except ValueError as error:  # json.JSONDecodeError, and a number too large for float
            problems.append(Problem(f"not a JSON line: {error}"[:200], file=file, line=number))
        if len(problems) >= 20:
            problems.append(Problem("more bad lines not shown", file=file))
            break
    if problems:
        raise ClusterforgeError(problems)
    return results


def read_output(output: str) -> list[NodeResult]:
    """The results in srun's output: lines that are JSON objects naming a node. Other lines are srun's own; a
    node's line that is malformed counts as that node failing, with what was wrong as its detail."""
    results: list[NodeResult] = []
    for data in node_objects(output):
        try:
            results.append(node_result(data))
        except _Bad as bad:
            if NODE_NAME.match(data["node"]):
                results.append(NodeResult(data["node"], "fail", 0.0, (), (),
                                          f"unreadable result: {bad.path}: {bad}"[:MAX_TEXT]))
    return results


def with_missing(results: list[NodeResult], expected: list[str]) -> list[NodeResult]:
    """One result per expected node, `missing` for those that printed nothing, in the order asked for; nodes that
    answered without being asked for follow (the last line of a node counts)."""
    found = {r.node: r for r in results}
    asked = set(expected)
    return [found.get(node) or NodeResult(node, "missing", 0.0, (), (), "no result: the node did not run the test")
            for node in expected] + [r for n, r in sorted(found.items()) if n not in asked]
