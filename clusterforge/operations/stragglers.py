"""Which GPUs of a fleet are slow, which compute wrong answers, and which gave no answer: pure functions over the
node results of `clusterforge health perf` (operations/perf_run.py).

In a synchronous job every GPU runs at the pace of the slowest, so a GPU is judged against its peers: the fleet
median of its model. Healthy GPUs of one model spread a few percent; a GPU below the median by more than the
fleet tolerance is a straggler. A fleet slow as a whole (a bad driver, power capping everywhere) has no
stragglers by that measure, so a GPU is also slow below a floor, a fraction of its model's datasheet peak.

A wrong answer is worse than a slow one: the checksum comes from exact integer arithmetic, so every healthy GPU
of every model prints the same. A GPU whose checksum differs from the fleet's most common one, or that its node
found wrong itself (`checksum_ok: false`), is silent data corruption (`gpu-sdc`), whatever its speed. A GPU
that could not run the test, a node that printed nothing, or one whose output holds no readable result of its
own (several, another node's: perf_run.py), is its own class (`gpu-perf`): nothing was measured, so it is
neither slow nor wrong.

GPUs are compared per reported name (one A100 name has 40 GB of 1.6 TB/s, another 80 GB of 2 TB/s), each name
labelled with the catalog model it maps to; a name the catalog does not know is compared with itself, without
a floor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING

from clusterforge.core.hostlist import compress
from clusterforge.operations.perf_run import UNREADABLE, GpuResult, NodeResult
from clusterforge.policies.config import PerfTolerances

if TYPE_CHECKING:
    from clusterforge.catalog.software import GpuModelRow

# Classes, worst first: a node named in several is drained for the first (one drain reason per node).
CORRUPTION, ERROR, MISSING, SLOW = "corruption", "error", "missing", "slow"
CLASS_ORDER = (CORRUPTION, ERROR, MISSING, SLOW)
CODES = {CORRUPTION: "gpu-sdc", ERROR: "gpu-perf", MISSING: "gpu-perf", SLOW: "gpu-slow"}
METRICS = {"gemm": ("GEMM", "TFLOP/s"), "hbm": ("HBM", "GB/s")}


@dataclass(frozen=True)
class Peak:
    """A catalog GPU model's datasheet peaks, in the units the nodes report (TFLOP/s, GB/s)."""

    model: str
    gemm_tflops: float | None
    hbm_gbps: float | None


@dataclass(frozen=True)
class ModelMedian:
    """The fleet of one reported name: how many GPUs measured, their medians and the catalog model's peaks."""

    name: str
    model: str | None
    gpus: int
    gemm_tflops: float | None
    hbm_gbps: float | None
    gemm_peak: float | None
    hbm_peak: float | None

    @property
    def label(self) -> str:
        return self.model or self.name


@dataclass(frozen=True)
class Outlier:
    """One thing named: a GPU (`gpu` its index) or a whole node (`gpu` None). For a slow GPU, `metric` is gemm or
    hbm and `measured`, `median` and `short_pct` (how far below the median, in percent) say by how much."""

    node: str
    kind: str  # corruption, error, missing, slow
    reason: str  # what a group of outliers shares, e.g. "GEMM below the fleet median"
    gpu: int | None = None
    model: str = ""
    metric: str = ""
    measured: float | None = None
    median: float | None = None
    short_pct: float | None = None
    detail: str = ""

    @property
    def code(self) -> str:
        return CODES[self.kind]


@dataclass(frozen=True)
class FleetReport:
    nodes: int
    answered: int
    gpus: int
    reference_checksum: str | None
    reference_count: int
    medians: tuple[ModelMedian, ...]
    outliers: tuple[Outlier, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.outliers


def catalog_peaks(rows: Iterable[GpuModelRow]) -> dict[str, Peak]:
    """The catalog's GPU models by each name they are reported under (normalized), TB/s turned into GB/s."""
    return {normalized(name): Peak(row.gpu_model, row.bf16_dense_tflops,
                                   row.hbm_tb_s * 1000 if row.hbm_tb_s is not None else None)
            for row in rows for name in row.reported_names}


def normalized(name: str) -> str:
    """A reported name as it is looked up: spaces collapsed, case folded (drivers have changed both)."""
    return " ".join(name.split()).casefold()


def fleet_checksum(nodes: Sequence[NodeResult]) -> tuple[str | None, int]:
    """The fleet's most common checksum among GPUs whose node did not find it wrong, and how many print it."""
    counts = Counter(g.checksum for n in nodes for g in n.gpus
                     if g.error is None and g.checksum is not None and g.checksum_ok is not False)
    if not counts:
        return None, 0
    checksum, count = counts.most_common(1)[0]
    return checksum, count


def _corrupt(gpu: GpuResult, reference: str | None) -> str:
    """Why a GPU's answer is wrong, or ""."""
    if gpu.checksum_ok is False:
        return "its node found its checksum wrong"
    if gpu.checksum is not None and reference is not None and gpu.checksum != reference:
        return "checksum differs from the fleet's"
    return ""


def _incomplete(gpu: GpuResult) -> str:
    missing = [n for n, v in (("gemm_tflops", gpu.gemm_tflops), ("hbm_gbps", gpu.hbm_gbps),
                              ("checksum", gpu.checksum)) if v is None]
    return f"no {', '.join(missing)} in its result" if missing else ""


def _medians(nodes: Sequence[NodeResult], reference: str | None,
             peaks: Mapping[str, Peak]) -> dict[str, ModelMedian]:
    """Each reported name's medians over the GPUs that measured and answered right."""
    gemm: dict[str, list[float]] = {}
    hbm: dict[str, list[float]] = {}
    for node in nodes:
        for gpu in node.gpus:
            if gpu.error is not None or _corrupt(gpu, reference):
                continue
            if gpu.gemm_tflops is not None:
                gemm.setdefault(gpu.name, []).append(gpu.gemm_tflops)
            if gpu.hbm_gbps is not None:
                hbm.setdefault(gpu.name, []).append(gpu.hbm_gbps)
    out = {}
    for name in sorted(set(gemm) | set(hbm)):
        peak = peaks.get(normalized(name))
        out[name] = ModelMedian(
            name, peak.model if peak else None, max(len(gemm.get(name, ())), len(hbm.get(name, ()))),
            median(gemm[name]) if name in gemm else None, median(hbm[name]) if name in hbm else None,
            peak.gemm_tflops if peak else None, peak.hbm_gbps if peak else None)
    return out


def _slow(node: str, gpu: GpuResult, fleet: ModelMedian, tolerances: PerfTolerances) -> list[Outlier]:
    """The GPU's figures below its fleet's median × (1 − tolerance) or below its peak × floor."""
    found = []
    for metric, value, typical, peak, floor in (
            ("gemm", gpu.gemm_tflops, fleet.gemm_tflops, fleet.gemm_peak, tolerances.gemm_floor),
            ("hbm", gpu.hbm_gbps, fleet.hbm_gbps, fleet.hbm_peak, tolerances.hbm_floor)):
        if value is None or typical is None:
            continue
        below_fleet = value < typical * (1 - tolerances.fleet_tolerance)
        below_floor = peak is not None and value < peak * floor
        if not (below_fleet or below_floor):
            continue
        title, unit = METRICS[metric]
        short = (typical - value) / typical * 100 if typical else 0.0
        reason = f"{title} below the fleet median" if below_fleet else f"{title} below {floor:.0%} of its peak"
        detail = f"{title} {value:,.1f} {unit}, fleet median {typical:,.1f} ({short:.1f}% short)"
        if below_floor and peak is not None:
            detail += f", {value / peak:.0%} of the {peak:,.0f} peak"
        found.append(Outlier(node, SLOW, reason, gpu.index, fleet.label, metric, value, typical, round(short, 2),
                             detail))
    return found


def analyse(nodes: Sequence[NodeResult], peaks: Mapping[str, Peak], tolerances: PerfTolerances) -> FleetReport:
    """Every outlier of the fleet, with the medians it was judged against."""
    reference, reference_count = fleet_checksum(nodes)
    medians = _medians(nodes, reference, peaks)
    outliers: list[Outlier] = []
    for node in nodes:
        if node.status == "missing":
            outliers.append(Outlier(node.node, MISSING, "no result", detail=node.detail))
            continue
        if node.status == UNREADABLE:  # several results, another node's, or not readable: none is judged
            outliers.append(Outlier(node.node, ERROR, "no readable result of its own", detail=node.detail))
            continue
        named = len(outliers)
        for gpu in node.gpus:
            label = medians[gpu.name].label if gpu.name in medians else gpu.name
            if gpu.error is not None:
                outliers.append(Outlier(node.node, ERROR, "the test failed on a GPU", gpu.index, label,
                                        detail=gpu.error))
            elif why := _corrupt(gpu, reference):
                outliers.append(Outlier(node.node, CORRUPTION, why, gpu.index, label, "checksum",
                                        detail=f"checksum {gpu.checksum or '-'}, fleet {reference or '-'}"))
            elif why := _incomplete(gpu):
                outliers.append(Outlier(node.node, ERROR, "incomplete result", gpu.index, label, detail=why))
            else:
                outliers += _slow(node.node, gpu, medians[gpu.name], tolerances)
        if node.status == "fail" and len(outliers) == named:
            why = node.detail or ", ".join(node.codes) or "no detail"
            outliers.append(Outlier(node.node, ERROR, "the node reported a failure", detail=why))
    return FleetReport(len(nodes), sum(1 for n in nodes if n.status != "missing"),
                       sum(len(n.gpus) for n in nodes), reference, reference_count, tuple(medians.values()),
                       tuple(outliers))


@dataclass(frozen=True)
class OutlierGroup:
    """Outliers of one class, reason and model: one line of the text view."""

    kind: str
    reason: str
    model: str
    outliers: tuple[Outlier, ...]

    @property
    def code(self) -> str:
        return CODES[self.kind]

    @property
    def nodes(self) -> list[str]:
        return list(dict.fromkeys(o.node for o in self.outliers))

    @property
    def gpus(self) -> int:
        return len({(o.node, o.gpu) for o in self.outliers if o.gpu is not None})


def grouped(outliers: Iterable[Outlier]) -> list[OutlierGroup]:
    """Outliers by class (worst first), reason and model, in the order found within each group."""
    groups: dict[tuple[str, str, str], list[Outlier]] = {}
    for outlier in outliers:
        groups.setdefault((outlier.kind, outlier.reason, outlier.model), []).append(outlier)
    order = sorted(groups, key=lambda key: (CLASS_ORDER.index(key[0]), key[1], key[2]))
    return [OutlierGroup(kind, reason, model, tuple(groups[kind, reason, model]))
            for kind, reason, model in order]


DRAIN_REASONS = {
    "gpu-sdc": "clusterforge-health: gpu-sdc (person): a GPU computed a wrong GEMM checksum against the fleet "
               "(clusterforge health perf)",
    "gpu-perf": "clusterforge-health: gpu-perf (person): the GPU performance test failed on a GPU, or the node "
                "printed no readable result of its own (clusterforge health perf)",
    "gpu-slow": "clusterforge-health: gpu-slow (person): GEMM or memory bandwidth of a GPU below the fleet "
                "(clusterforge health perf)",
}


@dataclass(frozen=True)
class Drain:
    code: str
    hostlist: str
    count: int

    def argv(self) -> list[str]:
        return ["scontrol", "update", f"NodeName={self.hostlist}", "State=DRAIN", f"Reason={DRAIN_REASONS[self.code]}"]


def drains(outliers: Iterable[Outlier]) -> list[Drain]:
    """One drain per reason code, its nodes as one hostlist; a node under several codes is drained for the worst
    (corruption, then a failed test, then slowness). A node that printed nothing is not drained: nothing was
    measured there, and the cause may be the job's (a node busy or down is SLURM's to mark)."""
    worst: dict[str, str] = {}
    for outlier in outliers:
        if outlier.kind == MISSING:
            continue
        current = worst.get(outlier.node)
        if current is None or CLASS_ORDER.index(outlier.kind) < CLASS_ORDER.index(current):
            worst[outlier.node] = outlier.kind
    by_code: dict[str, list[str]] = {}
    for node, kind in worst.items():
        by_code.setdefault(CODES[kind], []).append(node)
    return [Drain(code, compress(by_code[code]), len(by_code[code]))
            for code in ("gpu-sdc", "gpu-perf", "gpu-slow") if code in by_code]
