"""Rack elevation drawings (SVG): every rack, devices at their U positions coloured by pool, and the fabric
switches the planner racked in one colour of their own, labelled with their tier."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from clusterforge.model import Rack
from clusterforge.plan import RackLoad
from clusterforge.plan.elevation import elevation, switch_positions

U_PX = 9  # pixels per rack unit
WIDTH = 150
SWITCH_COLOUR = "#2f3542"  # fabric switches: darker than every pool colour, so they read as a different thing
LABEL_MIN_PX = 12  # a device box this tall holds a line of 8 px label text; shorter ones take 7 px (svg .label.small)
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f", "#e15759"]


@dataclass(frozen=True)
class Slot:
    """One device drawn in a rack: its pool (a fabric switch's tier), lowest U, height and catalog key."""

    pool: str
    bottom: int
    height: int
    hardware: str
    switch: bool = False


def pool_colours(pools: list[str]) -> dict[str, str]:
    return {pool: PALETTE[i % len(PALETTE)] for i, pool in enumerate(pools)}


def slots(load: RackLoad, rack: Rack, hardware: dict[str, str]) -> tuple[list[Slot], int]:
    """Devices at the U positions the planner gives them, and how many found no room (RCK-001 reports it)."""
    heights = {placed.pool: server.u_height for placed, server in load.servers}
    positions = elevation(load.rack, heights, rack.u_height, rack.reserved_u)
    out: list[Slot] = []
    homeless = 0
    for placed, starts in zip(load.rack.devices, positions, strict=True):
        for start in starts:
            if start is None:
                homeless += 1
            else:
                out.append(Slot(placed.pool, start, heights[placed.pool], hardware[placed.pool]))
    switch_heights = {placed.switch: switch.u_height for placed, switch in load.switches}
    tops = switch_positions(load.rack, heights, rack.u_height, rack.reserved_u, switch_heights)
    for switches, starts in zip(load.rack.switches, tops, strict=True):
        for start in starts:
            if start is None:
                homeless += 1
            else:
                out.append(Slot(switches.tier, start, switch_heights[switches.switch], switches.switch, True))
    return out, homeless


def _label(slot: Slot) -> str:
    return f"{slot.pool} · {slot.hardware}"


def label_runs(drawn: list[Slot]) -> list[list[Slot]]:
    """The devices as the runs that share one label: a stack of identical devices each shorter than a line of
    label text (1U switches: nine leaves of a GB200 NVL72 row's network rack) is labelled once, `leaf · qm9700
    ×9`, centred on the stack; nine labels 9 px apart in 8 px type would print over each other. Taller devices
    keep a label each."""
    runs: list[list[Slot]] = []
    for slot in sorted(drawn, key=lambda s: (s.bottom, s.switch)):
        last = runs[-1][-1] if runs else None
        if (last is not None and slot.height * U_PX < LABEL_MIN_PX and (slot.pool, slot.hardware, slot.switch,
                slot.height) == (last.pool, last.hardware, last.switch, last.height)
                and slot.bottom == last.bottom + last.height):
            runs[-1].append(slot)
        else:
            runs.append([slot])
    return runs


def rack_svg(load: RackLoad, rack: Rack, colours: dict[str, str], hardware: dict[str, str],
             failing: bool) -> str:
    """One rack: a frame of u_height units, reserved units hatched at the top, devices as labelled boxes."""
    height = rack.u_height * U_PX
    parts = [f'<svg class="rack" role="img" aria-label="rack {escape(rack.name)}" width="{WIDTH + 30}" '
             f'height="{height + 24}" viewBox="0 0 {WIDTH + 30} {height + 24}" xmlns="http://www.w3.org/2000/svg">',
             f'<rect x="24" y="2" width="{WIDTH}" height="{height}" class="frame{" failing" if failing else ""}"/>']
    for u in range(1, rack.u_height + 1, 5):
        y = 2 + height - u * U_PX
        parts.append(f'<text x="20" y="{y + U_PX - 1}" class="u">{u}</text>')
    if rack.reserved_u:
        y = 2
        parts.append(f'<rect x="24" y="{y}" width="{WIDTH}" height="{rack.reserved_u * U_PX}" class="reserved">'
                     f'<title>{rack.reserved_u}U reserved</title></rect>')
    drawn, homeless = slots(load, rack, hardware)
    for run in label_runs(drawn):
        parts.append('<g class="run">')
        for slot in run:
            y = 2 + height - (slot.bottom + slot.height - 1) * U_PX
            kind = "device switch" if slot.switch else "device"
            fill = SWITCH_COLOUR if slot.switch else colours.get(slot.pool, "#999")
            parts.append(
                f'<g class="{kind}"><rect x="25" y="{y + 0.5}" width="{WIDTH - 2}" '
                f'height="{slot.height * U_PX - 1}" rx="2" fill="{fill}"><title>{escape(_label(slot))}'
                f'{" switch" if slot.switch else ""} at U{slot.bottom}</title></rect></g>')
        first, count = run[0], len(run)
        top = 2 + height - (first.bottom + count * first.height - 1) * U_PX
        tall = count * first.height * U_PX
        small = " small" if tall < LABEL_MIN_PX else ""
        text = _label(first) + (f" ×{count}" if count > 1 else "")
        parts.append(f'<text x="{24 + WIDTH / 2}" y="{top + tall / 2 + (2.5 if small else 3)}" '
                     f'class="label{small}">{escape(text)}</text></g>')
    name = escape(rack.name) + (f" (+{homeless} without room)" if homeless else "")
    parts.append(f'<text x="{24 + WIDTH / 2}" y="{height + 18}" class="name">{name}</text></svg>')
    return "".join(parts)
