"""`clusterforge health perf`: the srun that runs the health check's perf tier on every node, and the node's
results read back from the one JSON object each node prints.

Each node runs `clusterforge-health --perf --json` (roles/health): a bf16 GEMM and a device-to-device copy on each
GPU, with a checksum from exact integer arithmetic that every healthy GPU of every model prints the same. The node
cannot tell slow from normal (that takes the fleet: operations/stragglers.py), so nothing here judges speed.

A result counts for the node whose task printed it, as SLURM labels it (node_lines.py, own_results.py), never for
the node it names. Results come from srun's output, where other lines (srun's own, a node's stray output) are
skipped and a node's unreadable, foreign or repeated result is that node's failure (status `unreadable`), or from
a saved file (`--from`, the `NODE: {...}` lines `--save` writes), read strictly: a bad line there is an input error
at its line, never a verdict.

The object, as the health script prints it (docs/operations.md lists it too): `node` (required, the node's own
name), `status` (required: pass, fail or skipped), `seconds`, `gpus` (a list, each `index` (required, 0 to 1,023),
`name`, then either `error` or `gemm_tflops`, `hbm_gbps`, `checksum` (hexadecimal) and `checksum_ok`), `codes`
(reason codes), `detail`; other fields are ignored.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.operations.diag import HEALTH_SCRIPT
from clusterforge.operations.node_lines import TaskOutput
from clusterforge.operations.own_results import BadField, Own, live, node_and_status
from clusterforge.operations.own_results import read_saved as read_own
from clusterforge.operations.srun import per_node_srun

TIME_LIMIT_MIN = 10  # a GEMM and a copy per GPU take seconds; the rest is SLURM's start
UNREADABLE = "unreadable"  # a node whose output holds no one readable result of its own
CHECKSUM = re.compile(r"[0-9a-fA-F]{1,64}\Z")
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
    """One node's result. `status` is the node's own word (pass, fail, skipped), `missing` when it printed none, or
    `unreadable` when what it printed is not one readable result of its own (`detail` says what)."""

    node: str
    status: str
    seconds: float
    gpus: tuple[GpuResult, ...]
    codes: tuple[str, ...] = ()
    detail: str = ""


def srun_command(nodes: Sequence[str], partition: str | None = None, reservation: str | None = None) -> list[str]:
    """The srun argv: one task on each node, labelled, the nodes to itself (a neighbour's job would slow the GEMM)."""
    argv = per_node_srun(nodes, "clusterforge-perf", TIME_LIMIT_MIN, partition, reservation, "--kill-on-bad-exit=0")
    return [*argv, HEALTH_SCRIPT, "--perf", "--json"]


def _text(value: Any, path: str, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise BadField(path, f"expected text, got {type(value).__name__}")
    return value[:MAX_TEXT]


def _figure(value: Any, path: str) -> float | None:
    """A non-negative finite number, or None where the node left it out."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise BadField(path, f"expected a non-negative number, got {value!r}"[:200])
    return float(value)


def _gpu(data: Any, path: str) -> GpuResult:
    if not isinstance(data, dict):
        raise BadField(path, "expected an object")
    index = data.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < MAX_GPUS:
        raise BadField(f"{path}.index", f"expected a GPU index 0 to {MAX_GPUS - 1}, got {index!r}"[:200])
    name = sys.intern(_text(data.get("name"), f"{path}.name"))
    if "error" in data:
        return GpuResult(index, name, None, None, None, None, _text(data["error"], f"{path}.error") or "error")
    checksum = data.get("checksum")
    if checksum is not None and (not isinstance(checksum, str) or not CHECKSUM.match(checksum)):
        raise BadField(f"{path}.checksum", f"expected hexadecimal digits, got {checksum!r}"[:200])
    checksum_ok = data.get("checksum_ok")
    if checksum_ok is not None and not isinstance(checksum_ok, bool):
        raise BadField(f"{path}.checksum_ok", f"expected true or false, got {checksum_ok!r}"[:200])
    return GpuResult(index, name, _figure(data.get("gemm_tflops"), f"{path}.gemm_tflops"),
                     _figure(data.get("hbm_gbps"), f"{path}.hbm_gbps"),
                     sys.intern(checksum.lower()) if checksum is not None else None, checksum_ok)


def node_result(data: Any) -> NodeResult:
    """A node's JSON object as a NodeResult; `BadField` names the first field that is not as the script prints it.
    `node` and `status` are required: a result without its status is no verdict (never read as `fail`)."""
    node, status = node_and_status(data)
    gpus = data.get("gpus") or []
    if not isinstance(gpus, list) or len(gpus) > MAX_GPUS:
        raise BadField("gpus", f"expected a list of at most {MAX_GPUS} GPUs")
    codes = data.get("codes") or []
    if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
        raise BadField("codes", "expected a list of reason codes")
    return NodeResult(node, status, _figure(data.get("seconds"), "seconds") or 0.0,
                      tuple(_gpu(g, f"gpus[{i}]") for i, g in enumerate(gpus)),
                      tuple(c[:64] for c in codes[:20]), _text(data.get("detail"), "detail"))


def _results(own: list[Own[NodeResult]]) -> list[NodeResult]:
    return [o.result if o.result is not None else NodeResult(o.node, UNREADABLE, 0.0, (), (), o.problem[:MAX_TEXT])
            for o in own]


def read_saved(lines: Iterable[str], file: str) -> list[NodeResult]:
    """The results in a saved file (`NODE: {...}` lines, own_results.py): a bad line is a problem at `file:line`
    (all of them, so one run shows what to fix); a node with several lines or naming another is `unreadable`."""
    return _results(read_own(lines, file, node_result))


def read_output(printed: dict[str, TaskOutput], order: Sequence[str]) -> list[NodeResult]:
    """The results of srun's output, by the node SLURM ran each task on (node_lines.by_node): one readable result of
    its own per node, else that node `unreadable` with what was wrong as its detail."""
    return _results(live(printed, order, node_result))


def with_missing(results: list[NodeResult], expected: list[str]) -> list[NodeResult]:
    """One result per expected node, `missing` for those that printed nothing, in the order asked for; nodes that
    answered without being asked for follow (there is one result per node: own_results.py)."""
    found = {r.node: r for r in results}
    asked = set(expected)
    return [found.get(node) or NodeResult(node, "missing", 0.0, (), (), "no result: the node did not run the test")
            for node in expected] + [r for n, r in sorted(found.items()) if n not in asked]
