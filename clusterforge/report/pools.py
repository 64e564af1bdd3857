"""Cloud pools as drawings: a cloud pool has no rack, so the report draws each one as a block of its own (in a cloud
blueprint where the elevations would be, in a hybrid beside the hall's racks): its instances in their placement
group, with their GPUs, their fabric interfaces and the capacity they launch into (the managed file system they
mount is the target's own card, its `report.py`'s `storage_card`). A power-saved pool (`max_count`) is drawn at
max_count, as the plan and the cost count it: its always-on instances solid, the ones SLURM powers up on demand with
a dashed edge.

The facts come from the target (its `report.py`'s `cloud_pools`) and the pool's counts from the blueprint; this
module only draws what it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from clusterforge.report.counts import pool_words
from clusterforge.report.words import counted

WIDTH = 560
BOX_W, BOX_H, GAP = 58, 34, 6
PER_LINE = 8
DRAWN = 32  # instances drawn per pool; more are counted in a label


def pool_svg(pool: Mapping[str, Any], colour: str) -> str:
    """One pool: up to DRAWN instance boxes (each with its GPUs as cells and its fabric interfaces as ticks) inside
    a dashed frame standing for its placement group, labelled with what the pool is and where it runs. A
    power-saved pool shows max_count boxes, those above its count marked `on-demand`."""
    always = int(pool.get("count", 0))
    max_count = pool.get("max_count")
    count = int(max_count) if max_count is not None else always
    shown = min(count, DRAWN)
    lines = max(1, -(-shown // PER_LINE))
    top = 46
    more = count - shown
    height = top + lines * (BOX_H + GAP) + (28 if more else 4)
    name = escape(str(pool.get("name", "")))
    parts = [f'<svg class="pool" role="img" aria-label="pool {name}" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="8" y="18" class="title">{name} · '
             f'{escape(pool_words(always, None if max_count is None else count, str(pool.get("hardware", ""))))}'
             '</text>',
             f'<text x="8" y="34" class="sub">{escape(str(pool.get("placement", "")))}'
             f'{" · " + escape(str(pool["zone"])) if pool.get("zone") else ""}</text>',
             f'<rect x="4" y="{top - 6}" width="{WIDTH - 8}" height="{lines * (BOX_H + GAP) + 6}" rx="6" '
             f'class="{"group" if "no placement" not in str(pool.get("placement", "")) else "group none"}"/>']
    gpus, interfaces = int(pool.get("gpus_each", 0)), int(pool.get("interfaces", 0))
    for i in range(shown):
        x = 12 + (i % PER_LINE) * (BOX_W + GAP)
        y = top + (i // PER_LINE) * (BOX_H + GAP)
        kind = "instance" if i < always else "instance on-demand"
        parts.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="3" fill="{colour}" '
                     f'class="{kind}"/>')
        for g in range(min(gpus, 8)):  # two lines of four GPU cells
            parts.append(f'<rect x="{x + 5 + (g % 4) * 12}" y="{y + 4 + (g // 4) * 10}" width="9" height="7" '
                         f'class="gpu"/>')
        ticks = min(interfaces, 32)
        for e in range(ticks):  # the fabric interfaces along the bottom edge
            parts.append(f'<rect x="{x + 3 + e * (BOX_W - 6) / max(ticks, 1):.1f}" y="{y + BOX_H - 7}" '
                         f'width="{max((BOX_W - 6) / max(ticks, 1) - 0.6, 0.6):.1f}" height="4" class="nic"/>')
    if more:
        parts.append(f'<text x="8" y="{height - 8}" class="sub">+{counted(more, "more instance")} (not drawn)</text>')
    parts.append("</svg>")
    return "".join(parts)


def pool_facts(pool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The pool's facts as (label, value) lines beside its drawing."""
    always, gpus_each = int(pool.get("count", 0)), int(pool.get("gpus_each", 0))
    max_count = pool.get("max_count")
    count = int(max_count) if max_count is not None else always
    facts = [("instances", pool_words(always, None if max_count is None else count, str(pool.get("hardware", ""))))]
    if gpus_each:
        model = f", {pool['gpu_model']}" if pool.get("gpu_model") else ""
        ceiling = " at max_count" if max_count is not None else ""
        facts.append(("GPUs", f"{count * gpus_each:,}{ceiling} ({gpus_each} each{model})"))
    facts.append(("network", str(pool.get("network", ""))))
    for key in ("placement", "zone", "capacity", "role"):
        if pool.get(key):
            facts.append((key, str(pool[key])))
    return facts
