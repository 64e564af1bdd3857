"""`clusterforge health allreduce`: NCCL all-reduce across nodes, the fabric path a multi-node job uses.

One srun starts nccl-tests' `all_reduce_perf` (built with MPI) as one rank per GPU on every named node, each rank
driving one GPU (`-g 1`), the form nccl-tests' README gives for multi-process runs. Rank 0 prints the result table
(doc/PERFORMANCE.md, src/common.cu):

    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
      8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  337.35      0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 338.09

The bus bandwidth of the largest size is the figure judged (the smaller of out-of-place and in-place); `#wrong`
or the out-of-bounds count above zero is a wrong answer (`nccl-wrong`), however fast. A run that printed no table
failed; one SLURM cancelled at its time limit timed out.

`--pairs` runs disjoint pairs of nodes, each pair its own srun, a bounded number at once: a bad link or NIC slows
every pair it is in, so the pairs below the floor name it where the whole set's figure only says that one exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from clusterforge.accelerator_kernel.health_tools import failure_markers
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.operations.srun import exclusive_srun

if TYPE_CHECKING:
    from clusterforge.catalog import Entry

TIME_LIMIT_MIN = 10
SIZE = "8G"  # large enough that the time is bandwidth, not latency (doc/PERFORMANCE.md)
OK, SLOW, WRONG, FAILED, TIMEOUT, MEASURED = "ok", "below-floor", "nccl-wrong", "failed", "timeout", "measured"
VERDICT_ORDER = (WRONG, TIMEOUT, FAILED, SLOW, MEASURED, OK)
MAX_GPUS_PER_NODE = 1_024
PROGRAM = re.compile(r"[A-Za-z0-9_./+-]{1,200}\Z")  # a program path, never an option or a shell word
_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
_ROW = re.compile(r"\s*([0-9]+)\s+([0-9]+)\s+\S+\s+\S+(?:\s+-?[0-9]+)?"  # size, count, type, redop, [root]
                  rf"\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s+(\S+)"  # out-of-place time algbw busbw #wrong
                  rf"\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s+(\S+)\s*\Z")  # in-place
_AVG = re.compile(rf"#\s*Avg bus bandwidth\s*:\s*({_NUMBER})")
_OUT_OF_BOUNDS = re.compile(r"#\s*Out of bounds values\s*:\s*([0-9]+)\s*(OK|FAILED)?")
# SLURM's words for a step cancelled at its time limit, found by plain string search (timed_out): a pattern such as
# `Job step aborted.*time` scans to the end of the line from every match, quadratic in a line that repeats it.
_TIME_LIMIT_WORDS = ("due to time limit", "time limit exceeded")
_ABORTED = "job step aborted"


@cache
def _failure() -> re.Pattern[str]:
    """SLURM's error lines and the vendors' failure markers (accelerator_kernel/health_tools), as literals: linear."""
    return re.compile("|".join([r"(?:srun|slurmstepd): error:", *(re.escape(m) for m in failure_markers())]))


@dataclass(frozen=True, slots=True)
class Row:
    """One size of the table: bus bandwidth out-of-place and in-place (GB/s) and the wrong values counted."""

    size_bytes: int
    busbw_out: float
    busbw_in: float
    wrong: int


@dataclass(frozen=True, slots=True)
class Measurement:
    """What one run printed: the table's rows, the average line, the out-of-bounds count, and why it failed."""

    rows: tuple[Row, ...] = ()
    avg_busbw: float | None = None
    out_of_bounds: int | None = None
    timed_out: bool = False
    failure: str = ""

    @property
    def largest(self) -> Row | None:
        return max(self.rows, key=lambda r: r.size_bytes) if self.rows else None

    @property
    def busbw(self) -> float | None:
        """The largest size's bus bandwidth, the lower of out-of-place and in-place."""
        row = self.largest
        return min(row.busbw_out, row.busbw_in) if row else None

    @property
    def wrong(self) -> int:
        return max(self.out_of_bounds or 0, sum(r.wrong for r in self.rows))


@dataclass(frozen=True, slots=True)
class Verdict:
    nodes: tuple[str, ...]
    status: str
    busbw: float | None
    size_bytes: int | None
    avg_busbw: float | None
    wrong: int
    detail: str
    srun_exit: int | None = None


@dataclass(frozen=True)
class Floor:
    """The bus bandwidth below which a run fails, and where it came from (`--min-busbw`, or a share of the line
    rate of the blueprint's nodes)."""

    gbps: float | None
    source: str = ""
    line_rate_gbps: float | None = None
    gpus_per_node: int | None = None
    said: list[str] = field(default_factory=list)


def srun_command(nodes: str, gpus_per_node: int, program: str = "all_reduce_perf", partition: str | None = None,
                 reservation: str | None = None) -> list[str]:
    """One rank per GPU on every node, the nodes to the job, PMIx wiring the MPI ranks (nccl-tests built with
    MPI=1)."""
    argv = exclusive_srun(nodes, gpus_per_node, "clusterforge-allreduce", TIME_LIMIT_MIN, partition, reservation,
                          "--mpi=pmix")
    return [*argv, program, "-b", SIZE, "-e", SIZE, "-f", "2", "-g", "1"]


def check_program(program: str) -> str:
    if not PROGRAM.match(program) or program.startswith("-"):
        raise ClusterforgeError(Problem(f"{program!r} is not a program path", path="--program",
                                        hint="all_reduce_perf, or its path on the nodes"))
    return program


def _row(line: str) -> Row | None:
    found = _ROW.match(line)
    if not found:
        return None
    groups = found.groups()

    def wrong(text: str) -> int:
        if text.isdigit():
            return int(text)
        if text == "N/A":  # validation off (-c 0): nothing counted
            return 0
        raise ValueError(f"#wrong {text!r} is not a count")

    return Row(int(groups[0]), float(groups[4]), float(groups[8]), wrong(groups[5]) + wrong(groups[9]))


def timed_out(line: str) -> bool:
    """Whether LINE is SLURM saying it cancelled the step at its time limit (`... DUE TO TIME LIMIT ***`, `time limit
    exceeded`, `Job step aborted: ... time ...`), in any case: a few plain searches, each linear in the line."""
    folded = line.lower()
    if any(words in folded for words in _TIME_LIMIT_WORDS):
        return True
    aborted = folded.find(_ABORTED)
    return aborted >= 0 and folded.find("time", aborted + len(_ABORTED)) >= 0


def parse(output: str) -> Measurement:
    """srun's output, leniently: lines other than the table's (NCCL INFO, srun's own) are skipped. One pass, each
    line read by patterns without nested or overlapping repetition (linear in the line)."""
    rows: list[Row] = []
    avg = bounds = None
    late, failure = False, ""
    for line in output.splitlines():
        late = late or timed_out(line)
        if not failure and _failure().search(line):
            failure = line.strip()[:300]
        if found := _AVG.search(line):
            avg = float(found.group(1))
        elif found := _OUT_OF_BOUNDS.search(line):
            bounds = int(found.group(1))
        elif not line.lstrip().startswith("#"):
            try:
                row = _row(line)
            except ValueError:
                continue
            if row:
                rows.append(row)
    return Measurement(tuple(rows), avg, bounds, late, failure)


def read_saved(lines: Iterable[str], file: str) -> Measurement:
    """A saved all_reduce_perf output (`--from`), strictly: a line that begins like a table row (a size) but is not
    one, a `#wrong` that is not a count, or a file with neither a table nor a failure is an input error."""
    problems: list[Problem] = []
    text: list[str] = []
    for number, line in enumerate(lines, 1):
        text.append(line)
        if line.lstrip()[:1].isdigit():
            try:
                if _row(line.rstrip("\n")) is None:
                    problems.append(Problem("not a row of all_reduce_perf's table (size, count, type, redop, root, "
                                            "then time, algbw, busbw, #wrong out-of-place and in-place)",
                                            file=file, line=number))
            except ValueError as error:
                problems.append(Problem(str(error), file=file, line=number))
        if len(problems) >= 20:
            break
    if problems:
        raise ClusterforgeError(problems)
    measured = parse("".join(text))
    if not measured.rows and measured.avg_busbw is None and not measured.timed_out and not measured.failure:
        raise ClusterforgeError(Problem("no all_reduce_perf result: neither its size table nor its '# Avg bus "
                                        "bandwidth' line", file=file,
                                        hint="save the output of `all_reduce_perf -b 8G -e 8G -f 2 -g 1` run "
                                             "under srun or mpirun"))
    return measured


def judge(nodes: Sequence[str], measured: Measurement, floor: float | None, srun_exit: int | None = None) -> Verdict:
    """Wrong values first (they matter however fast), then a run cut off or failed, then the floor."""
    busbw, row = measured.busbw, measured.largest
    size = row.size_bytes if row else None

    def verdict(status: str, detail: str) -> Verdict:
        return Verdict(tuple(nodes), status, busbw, size, measured.avg_busbw, measured.wrong, detail, srun_exit)

    if measured.wrong:
        return verdict(WRONG, f"{measured.wrong:,} wrong values: the reduction's result differs from the expected")
    if measured.timed_out:
        return verdict(TIMEOUT, f"SLURM cancelled the run at its time limit ({TIME_LIMIT_MIN} min)")
    if busbw is None:
        why = measured.failure or (f"srun exited {srun_exit}" if srun_exit else "no result table")
        return verdict(FAILED, f"no result: {why}")
    if floor is None:
        return verdict(MEASURED, f"bus bandwidth {busbw:,.1f} GB/s, not judged (no floor)")
    if busbw < floor:
        return verdict(SLOW, f"bus bandwidth {busbw:,.1f} GB/s, below the floor {floor:,.1f} GB/s "
                             f"({(floor - busbw) / floor:.0%} short)")
    return verdict(OK, f"bus bandwidth {busbw:,.1f} GB/s, floor {floor:,.1f} GB/s")


def pairs(nodes: Sequence[str], shift: int = 0) -> list[tuple[str, str]]:
    """Disjoint pairs of neighbours after rotating the list by `shift` (a second run with shift 1 pairs each node
    with its other neighbour, which tells which node of a bad pair is bad); an odd node out is paired with the
    first node."""
    if len(nodes) < 2:
        return []
    shift %= len(nodes)
    order = [*nodes[shift:], *nodes[:shift]]
    found = [(order[i], order[i + 1]) for i in range(0, len(order) - 1, 2)]
    if len(order) % 2:
        found.append((order[-1], order[0]))
    return found


def line_rate(entry: Entry) -> tuple[float, int, str] | None:
    """A node's compute-fabric line rate in GB/s, its GPUs, and how it was counted, from its catalog entry: the
    NICs of a server (one per rail) or a cloud instance type's fabric bandwidth. None where the catalog has neither.

    A ring all-reduce crosses each node's boundary once per ring, one ring per NIC, so its bus bandwidth is bounded
    by the node's NICs together (8 x 400 Gb/s NDR: 400 GB/s), not by one GPU's NIC."""
    from clusterforge.catalog import Server

    if isinstance(entry, Server):
        gpus, nics = entry.node_gpus, entry.node_nics
        if gpus and nics:
            return nics.compute * nics.speed_gbps / 8, gpus.count, f"{nics.compute} x {nics.speed_gbps} Gb/s NICs"
        return None
    gpus = getattr(entry, "gpus", None)
    fabric = getattr(entry, "fabric_line_rate", None)  # a cloud instance kind's network figure, where it has one
    if gpus is not None and fabric is not None and fabric[0] > 0:
        return fabric[0] / 8, int(gpus.count), f"{fabric[0]:,} Gb/s {fabric[1]}"
    return None
