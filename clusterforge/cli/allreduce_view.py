"""How `clusterforge health allreduce` shows its runs: one run's figures, or the pairs grouped by verdict with
their nodes as hostlists (6,250 pairs never make 6,250 lines), the worst few with figures; JSON lists every run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from clusterforge.accelerator_kernel.health_tools import health_tools
from clusterforge.cli import terminal
from clusterforge.cli.perf_view import hosts
from clusterforge.core.hostlist import compress
from clusterforge.operations.allreduce import FAILED, OK, SLOW, TIMEOUT, VERDICT_ORDER, WRONG, Floor, Verdict
from clusterforge.operations.next_steps import next_line, next_step

DETAILS_PER_GROUP = 5
BAD = (SLOW, WRONG, FAILED, TIMEOUT)


def _size(size: int | None) -> str:
    if size is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size:,} B"


def _floor_line(floor: Floor) -> str:
    if floor.gbps is None:
        return "floor: none (pass --min-busbw GBPS, or --blueprint FILE for a share of the fabric's line rate)"
    return f"floor: {floor.gbps:,.1f} GB/s bus bandwidth ({floor.source})"


def text(verdicts: Sequence[Verdict], floor: Floor, gpus_per_node: int, paired: bool) -> list[str]:
    columns = terminal.width()
    nodes = sorted({n for v in verdicts for n in v.nodes})
    library = health_tools().collectives
    if not paired:
        [v] = verdicts
        lines = [f"{library} all-reduce across {len(nodes):,} nodes ({len(nodes) * gpus_per_node:,} GPUs, "
                 f"{gpus_per_node} per node): {hosts(nodes, max(columns - 50, 30))}",
                 _floor_line(floor)]
        if v.busbw is not None:
            lines.append(f"  {_size(v.size_bytes)}: bus bandwidth {v.busbw:,.2f} GB/s"
                         + (f", average over sizes {v.avg_busbw:,.2f} GB/s" if v.avg_busbw is not None else ""))
        lines.append(f"verdict: {v.status}: {v.detail}")
        lines += [next_line("allreduce", key, status) for status, key in next_keys(verdicts, paired)]
        return [w for line in lines for w in terminal.wrap(line, columns, 6)]
    lines = [f"{library} all-reduce on {len(verdicts):,} pairs of {len(nodes):,} nodes ({gpus_per_node} GPUs per node)",
             _floor_line(floor)]
    for status in VERDICT_ORDER:
        group = [v for v in verdicts if v.status == status]
        if not group:
            continue
        members = sorted({n for v in group for n in v.nodes})
        figures = [v.busbw for v in group if v.busbw is not None]
        spread = f", {min(figures):,.1f}-{max(figures):,.1f} GB/s" if figures else ""
        head = f"  {status}: {len(group):,} pair{'s' if len(group) != 1 else ''}{spread}: "
        lines.append(head + hosts(members, max(columns - len(head) - 2, 30)))
        if status == OK:
            continue
        worst = sorted(group, key=lambda v: v.busbw if v.busbw is not None else -1.0)[:DETAILS_PER_GROUP]
        lines += [f"      {compress(v.nodes)}: {v.detail}" for v in worst]
        if len(group) > len(worst):
            lines.append(f"      … and {len(group) - len(worst):,} more (-f json lists every one)")
    lines.append(verdict(verdicts))
    lines += [next_line("allreduce", key, status) for status, key in next_keys(verdicts, paired)]
    return [w for line in lines for w in terminal.wrap(line, columns, 6)]


def next_keys(verdicts: Sequence[Verdict], paired: bool) -> list[tuple[str, str]]:
    """(status, its key in operations/next_steps.py) of each bad verdict, worst first. Below the floor: a set of
    nodes reruns as pairs, a single pair each node with a third one, pairs with --shift 1 until a node is in two bad
    pairs, and that node is drained and its link checked."""
    found = {v.status for v in verdicts}
    nodes = len({n for v in verdicts for n in v.nodes})
    if paired:
        below = "below-floor-named" if suspects(verdicts) else "below-floor-pairs"
    else:
        below = "below-floor-pair" if nodes == 2 else "below-floor"  # no nodes: a saved run without --nodes
    return [(s, below if s == "below-floor" else s) for s in VERDICT_ORDER if s in found and s in BAD]


def suspects(verdicts: Sequence[Verdict]) -> list[str]:
    """Nodes in more than one bad pair (an odd node out is in two pairs; `--shift 1` pairs every node again)."""
    counts: dict[str, int] = {}
    for v in verdicts:
        if v.status in BAD:
            for n in set(v.nodes):
                counts[n] = counts.get(n, 0) + 1
    return sorted(n for n, c in counts.items() if c > 1)


def verdict(verdicts: Sequence[Verdict]) -> str:
    bad = [v for v in verdicts if v.status in BAD]
    if not bad:
        return f"verdict: no pair below the floor or failed among {len(verdicts):,}"
    named = suspects(verdicts)
    return (f"verdict: {len(bad):,} of {len(verdicts):,} pairs bad; "
            + (f"in more than one bad pair: {compress(named)}" if named else
               "run again with --shift 1 to pair each node with its other neighbour: the node in two bad pairs "
               "is the bad one"))


def as_json(verdicts: Sequence[Verdict], floor: Floor, gpus_per_node: int, paired: bool, seconds: float) -> str:
    runs = [{**asdict(v), "nodes": compress(v.nodes), "node_count": len(v.nodes)} for v in verdicts]
    out: dict[str, Any] = {
        "mode": "pairs" if paired else "all", "gpus_per_node": gpus_per_node,
        "floor": {"gbps": floor.gbps, "source": floor.source, "line_rate_gbps": floor.line_rate_gbps},
        "runs": runs, "seconds": round(seconds, 1), "ok": not any(v.status in BAD for v in verdicts),
        "next": [{"status": s, "step": next_step("allreduce", key)} for s, key in next_keys(verdicts, paired)]}
    if paired:
        out["suspects"] = compress(suspects(verdicts))
    return json.dumps(out, indent=2)
