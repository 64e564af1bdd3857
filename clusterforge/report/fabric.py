"""The fabric diagram: tiers of switches with their counts and the cables between them."""

from __future__ import annotations

from html import escape

from clusterforge.plan import FatTree
from clusterforge.report.words import counted

SINGULAR = {"nodes": "node", "leaves": "leaf", "spines": "spine", "cores": "core"}  # a tier of one


def fabric_svg(tree: FatTree, switch: str, nodes: int) -> str:
    tiers = [("nodes", nodes, counted(tree.endpoints, "endpoint"))]
    tiers.append(("leaves", tree.leaves, f"{tree.leaf_downlinks} down / {tree.leaf_uplinks} up each"
                  + (f" ({tree.oversubscription:g}:1)" if tree.tiers >= 2 else "")))
    if tree.tiers == 2:
        tiers.append(("spines", tree.spines, f"{switch}"))
    elif tree.tiers >= 3:
        tiers.append(("spines", tree.spines, f"{tree.spine_downlinks} down / {tree.spine_uplinks} up each "
                      f"({tree.spine_oversubscription:g}:1)"))
    if tree.tiers >= 3:
        tiers.append(("cores", tree.cores, f"{switch}"))
    cables = list(tree.cables.items())
    width, row_h = 560, 70
    height = row_h * len(tiers) + 10
    parts = [f'<svg class="fabric" role="img" aria-label="fabric" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">']
    for i, (name, count, note) in enumerate(reversed(tiers)):
        y = 10 + i * row_h
        shown = min(count, 12)
        box_w = (width - 40) / max(shown, 1)
        for b in range(shown):
            parts.append(f'<rect x="{20 + b * box_w + 2}" y="{y}" width="{box_w - 4}" height="26" rx="3" '
                         f'class="tier {name}"/>')
        more = f" (+{count - shown} more)" if count > shown else ""
        tier = escape(counted(count, SINGULAR[name], name))
        parts.append(f'<text x="{width / 2}" y="{y + 42}" class="tierlabel">{tier}{more} · {escape(note)}</text>')
        if i < len(tiers) - 1:
            cable_name, cable_count = cables[len(tiers) - 2 - i]
            parts.append(f'<text x="{width - 10}" y="{y + 62}" class="cables">{counted(cable_count, "cable")} '
                         f'({escape(cable_name)})</text>')
    parts.append("</svg>")
    return "".join(parts)
