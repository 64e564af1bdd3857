"""Cloud pools and managed storage as drawings: a cloud blueprint has no racks, so the place where an on-prem
report draws its elevations shows each pool's instances in their placement group, with GPUs, EFA and the
capacity they launch into, and the FSx for Lustre file system they mount.

The facts come from the target (`report_pools`); this module only draws what it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from clusterforge.model import FsxLustre

WIDTH = 560
BOX_W, BOX_H, GAP = 58, 34, 6
PER_LINE = 8
DRAWN = 32  # instances drawn per pool; more are counted in a label


def pool_svg(pool: Mapping[str, Any], colour: str) -> str:
    """One pool: up to DRAWN instance boxes (each with its GPUs as cells and its EFA interfaces as ticks) inside
    a dashed frame standing for its placement group, labelled with what the pool is and where it runs."""
    count = int(pool.get("count", 0))
    shown = min(count, DRAWN)
    lines = max(1, -(-shown // PER_LINE))
    top = 46
    more = count - shown
    height = top + lines * (BOX_H + GAP) + (28 if more else 4)
    name, hardware = escape(str(pool.get("name", ""))), escape(str(pool.get("hardware", "")))
    parts = [f'<svg class="pool" role="img" aria-label="pool {name}" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="8" y="18" class="title">{name} · {count:,} × {hardware}</text>',
             f'<text x="8" y="34" class="sub">{escape(str(pool.get("placement", "")))}'
             f'{" · " + escape(str(pool["zone"])) if pool.get("zone") else ""}</text>',
             f'<rect x="4" y="{top - 6}" width="{WIDTH - 8}" height="{lines * (BOX_H + GAP) + 6}" rx="6" '
             f'class="{"group" if "no placement" not in str(pool.get("placement", "")) else "group none"}"/>']
    gpus, efa = int(pool.get("gpus_each", 0)), int(pool.get("efa", 0))
    for i in range(shown):
        x = 12 + (i % PER_LINE) * (BOX_W + GAP)
        y = top + (i // PER_LINE) * (BOX_H + GAP)
        parts.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="3" fill="{colour}" '
                     f'class="instance"/>')
        for g in range(min(gpus, 8)):  # two lines of four GPU cells
            parts.append(f'<rect x="{x + 5 + (g % 4) * 12}" y="{y + 4 + (g // 4) * 10}" width="9" height="7" '
                         f'class="gpu"/>')
        ticks = min(efa, 32)
        for e in range(ticks):  # the EFA interfaces along the bottom edge
            parts.append(f'<rect x="{x + 3 + e * (BOX_W - 6) / max(ticks, 1):.1f}" y="{y + BOX_H - 7}" '
                         f'width="{max((BOX_W - 6) / max(ticks, 1) - 0.6, 0.6):.1f}" height="4" class="efa"/>')
    if more:
        parts.append(f'<text x="8" y="{height - 8}" class="sub">+{more:,} more instances (not drawn)</text>')
    parts.append("</svg>")
    return "".join(parts)


def pool_facts(pool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The pool's facts as (label, value) lines beside its drawing."""
    count, gpus_each = int(pool.get("count", 0)), int(pool.get("gpus_each", 0))
    facts = [("instances", f"{count:,} × {pool.get('hardware', '')}")]
    if gpus_each:
        model = f", {pool['gpu_model']}" if pool.get("gpu_model") else ""
        facts.append(("GPUs", f"{int(pool.get('gpus', count * gpus_each)):,} ({gpus_each} each{model})"))
    facts.append(("network", str(pool.get("network", ""))))
    for key in ("placement", "zone", "capacity", "role"):
        if pool.get(key):
            facts.append((key, str(pool[key])))
    return facts


def fsx_card(lustre: object) -> dict[str, Any] | None:
    """The managed Lustre file system's figures (None when the blueprint has none or runs its own Lustre)."""
    if not isinstance(lustre, FsxLustre):
        return None
    tib = lustre.capacity_tib
    per_tib = lustre.throughput_mb_s_per_tib
    throughput = (f"{tib * per_tib / 1000:,.1f} GB/s ({per_tib} MB/s per TiB)" if per_tib
                  else "the deployment type's baseline")
    facts = [("capacity", f"{lustre.capacity_gib:,} GiB ({tib:,.1f} TiB, {lustre.storage_type})"),
             ("throughput", throughput), ("deployment type", lustre.deployment_type),
             ("mount", lustre.mount), ("Lustre", lustre.lustre_version)]
    if lustre.import_path:
        facts.append(("imports", lustre.import_path))
    svg = (f'<svg class="fsx" role="img" aria-label="FSx for Lustre" width="150" height="110" viewBox="0 0 150 110" '
           f'xmlns="http://www.w3.org/2000/svg"><path d="M10 20 v70 a65 14 0 0 0 130 0 v-70" class="drum"/>'
           f'<ellipse cx="75" cy="20" rx="65" ry="14" class="top"/>'
           f'<text x="75" y="58" class="big">{tib:,.1f} TiB</text>'
           f'<text x="75" y="76" class="small">{escape(lustre.deployment_type)}</text></svg>')
    return {"facts": facts, "svg": svg}
