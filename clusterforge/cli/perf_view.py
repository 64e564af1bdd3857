"""How `clusterforge health perf` shows a fleet's outliers: text grouped by class, reason and model with the nodes
as hostlists (12,500 nodes never make 12,500 lines), or JSON with every outlier and the medians."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from clusterforge.cli import terminal
from clusterforge.core.hostlist import HostlistCut, compress, cut_to_width
from clusterforge.operations.next_steps import next_line, next_step
from clusterforge.operations.stragglers import CLASS_ORDER, CODES, FleetReport, ModelMedian, Outlier, grouped
from clusterforge.policies.config import PerfTolerances

DETAILS_PER_GROUP = 3  # the worst few of a group are shown with their figures; JSON lists every one


@dataclass(frozen=True)
class DrainResult:
    code: str
    hostlist: str
    count: int
    exit: int
    message: str = ""


def hosts(names: Sequence[str], width: int) -> str:
    """The names as a hostlist of at most about `width` characters: whole parts while they fit, a part too long
    cut after its last range that fits, then `…(+N more)` for what was left out."""
    cut = cut_to_width(names, width)
    if cut.parts and len(cut.parts[0]) > width:  # one part, too long: its ranges that fit
        first, many = _cut(cut.parts[0], width)
        return HostlistCut((first,), cut.total - many, cut.total).text()
    return cut.text()


def _cut(part: str, width: int) -> tuple[str, int]:
    """`gpu-[001000,002000,…]`: a bracketed part cut after the ranges that fit in `width`, and how many names
    they stand for (at least one range, so a line always names a host)."""
    if not part.endswith("]") or "[" not in part:
        return part, 1
    prefix, body = part[:-1].split("[", 1)
    kept: list[str] = []
    count = 0
    for piece in body.split(","):
        if kept and len(prefix) + len(",".join([*kept, piece])) + 3 > width:
            break
        kept.append(piece)
        low, _, high = piece.partition("-")
        count += int(high or low) - int(low) + 1
    return f"{prefix}[{','.join(kept)}]", count


def _share(value: float | None, peak: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" + (f" ({value / peak:.0%} of {peak:,.0f})" if peak else "")


def _median_line(m: ModelMedian) -> str:
    name = m.name if m.model is None else f"{m.model} ({m.name})"
    unknown = "" if m.model else ", not in the catalog: no floor"
    return (f"  {name}: {m.gpus:,} GPUs, GEMM {_share(m.gemm_tflops, m.gemm_peak)} TFLOP/s, "
            f"HBM {_share(m.hbm_gbps, m.hbm_peak)} GB/s{unknown}")


def _worst(outliers: Sequence[Outlier]) -> list[Outlier]:
    return sorted(outliers, key=lambda o: -(o.short_pct or 0.0))[:DETAILS_PER_GROUP]


def _detail_line(o: Outlier) -> str:
    where = o.node if o.gpu is None else f"{o.node} GPU {o.gpu}"
    return f"      {where}: {o.detail}" if o.detail else f"      {where}"


def text(report: FleetReport, tolerances: PerfTolerances, drained: Sequence[DrainResult]) -> list[str]:
    """The text view, each line wrapped at the terminal's width."""
    columns = terminal.width()
    lines = [f"GPU performance of {report.nodes:,} nodes ({report.answered:,} answered, {report.gpus:,} GPUs), "
             f"slow below the fleet median by {tolerances.fleet_tolerance:.0%} or below "
             f"{tolerances.gemm_floor:.0%} (GEMM) / {tolerances.hbm_floor:.0%} (HBM) of the datasheet peak"]
    lines.append("fleet medians:")
    lines += [_median_line(m) for m in report.medians] or ["  no GPU measured"]
    if report.reference_checksum:
        lines.append(f"  checksum {report.reference_checksum}: {report.reference_count:,} GPUs")
    groups = grouped(report.outliers)
    if groups:
        lines.append("outliers:")
    for group in groups:
        nodes = group.nodes
        gpus = f", {group.gpus:,} GPU{'s' if group.gpus != 1 else ''}" if group.gpus else ""
        model = f" ({group.model})" if group.model else ""
        plural = "s" if len(nodes) != 1 else ""
        head = f"  {group.kind} {group.code}: {group.reason}{model}: {len(nodes):,} node{plural}"
        room = columns - len(head) - len(gpus) - 2  # too little: the hostlist wraps onto a line of its own
        lines.append(f"{head}{gpus}: {hosts(nodes, room - 16 if room >= 56 else columns - 24)}")
        worst = _worst(group.outliers)
        lines += [_detail_line(o) for o in worst]
        if len(group.outliers) > len(worst):
            lines.append(f"      … and {len(group.outliers) - len(worst):,} more (-f json lists every one)")
    for d in drained:
        state = "drained" if d.exit == 0 else f"NOT drained (scontrol exited {d.exit}: {d.message})"
        lines.append(f"{state} for {d.code}: {d.hostlist} ({d.count:,} node{'s' if d.count != 1 else ''})")
    lines.append(verdict(report))
    lines += [next_line("perf", kind, f"{kind} {CODES[kind]}") for kind in classes(report)]
    return [wrapped for line in lines for wrapped in terminal.wrap(line, columns, 6)]


def classes(report: FleetReport) -> list[str]:
    """The outlier classes named, worst first: each has its next step (operations/next_steps.py)."""
    named = {o.kind for o in report.outliers}
    return [kind for kind in CLASS_ORDER if kind in named]


def verdict(report: FleetReport) -> str:
    if report.ok:
        return f"verdict: no outlier among {report.gpus:,} GPUs on {report.nodes:,} nodes"
    counts: dict[str, int] = {}
    for o in report.outliers:
        counts[o.kind] = counts.get(o.kind, 0) + 1
    nodes = len({o.node for o in report.outliers})
    said = ", ".join(f"{n:,} {kind}" for kind, n in counts.items())
    return f"verdict: {len(report.outliers):,} outliers on {nodes:,} of {report.nodes:,} nodes ({said})"


def as_json(report: FleetReport, tolerances: PerfTolerances, drained: Sequence[DrainResult],
            srun_exit: int | None, seconds: float) -> str:
    groups = [{"class": g.kind, "code": g.code, "reason": g.reason, "model": g.model,
               "nodes": compress(g.nodes), "node_count": len(g.nodes),
               "gpu_count": g.gpus, "next": next_step("perf", g.kind)} for g in grouped(report.outliers)]
    out: dict[str, Any] = {
        "nodes": report.nodes, "answered": report.answered, "gpus": report.gpus,
        "tolerances": tolerances.model_dump(exclude={"allreduce_floor"}),  # health allreduce's
        "reference_checksum": report.reference_checksum, "reference_count": report.reference_count,
        "medians": [asdict(m) for m in report.medians],
        "groups": groups,
        "outliers": [{"class": o.kind, "code": o.code, **{k: v for k, v in asdict(o).items() if k != "kind"}}
                     for o in report.outliers],
        "drains": [asdict(d) for d in drained],
        "next": [{"class": kind, "code": CODES[kind], "step": next_step("perf", kind)} for kind in classes(report)],
        "srun_exit": srun_exit, "seconds": round(seconds, 1), "ok": report.ok}
    return json.dumps(out, indent=2)
