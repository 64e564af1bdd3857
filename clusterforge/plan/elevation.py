"""Rack elevation: the lowest U of every device, so the inventory says where each node stands.

Devices with an explicit `position` stack upwards from it. The others fill the lowest free U from the bottom;
reserved U are taken to be at the top (patch panels, management switches). A device that finds no free run
gets None: the rack is over-full, which RCK-001 reports. The fabric switches the planner racked fill the free
U from just below the reserved U downwards, after the devices (so a device's U never depends on them).
"""

from __future__ import annotations

from clusterforge.plan.model import RackPlan

Positions = tuple[tuple[int | None, ...], ...]  # per entry of RackPlan.devices, the lowest U of each device


def _stack(rack: RackPlan, heights: dict[str, int], u_height: int, reserved_u: int) -> tuple[Positions, list[bool]]:
    taken = [False] * (u_height + 1)  # index 1..u_height
    out: list[tuple[int | None, ...]] = [()] * len(rack.devices)
    for i, placed in enumerate(rack.devices):
        if placed.position is None:
            continue
        height = heights[placed.pool]
        starts = [placed.position + k * height for k in range(placed.count)]
        for first in starts:
            for u in range(first, min(first + height, u_height + 1)):
                taken[u] = True
        out[i] = tuple(starts)
    top = u_height - reserved_u
    cursor = 1
    for i, placed in enumerate(rack.devices):
        if placed.position is not None:
            continue
        height = heights[placed.pool]
        positions: list[int | None] = []
        for _ in range(placed.count):
            start = _lowest_free_run(taken, cursor, height, top)
            if start is None:
                positions.append(None)
                continue
            for u in range(start, start + height):
                taken[u] = True
            positions.append(start)
            if start == cursor:
                cursor = start + height
        out[i] = tuple(positions)
    return tuple(out), taken[:top + 1]


def elevation(rack: RackPlan, heights: dict[str, int], u_height: int, reserved_u: int) -> Positions:
    """Positions of the devices of each entry of `rack.devices`, in order."""
    return _stack(rack, heights, u_height, reserved_u)[0]


def free_runs(rack: RackPlan, heights: dict[str, int], u_height: int, reserved_u: int) -> list[int]:
    """Lengths of the free stretches of U left below the reserved top, lowest first (what the next devices
    can still fill: a 19U gap under an explicitly placed device holds two 8U servers, not 19/8), less the U of
    switches already racked from the top (as `switch_positions` stacks them)."""
    taken_u = _stack(rack, heights, u_height, reserved_u)[1]
    cursor = len(taken_u) - 1
    for placed in rack.switches:  # switches racked already (another team's fabric on a shared site)
        for _ in range(placed.count if placed.u_height else 0):
            start = _highest_free_run(taken_u, cursor, placed.u_height)
            if start is None:
                break
            taken_u[start:start + placed.u_height] = [True] * placed.u_height
            cursor = start - 1
    runs: list[int] = []
    length = 0
    for taken in taken_u[1:]:
        if taken:
            if length:
                runs.append(length)
            length = 0
        else:
            length += 1
    if length:
        runs.append(length)
    return runs


def _lowest_free_run(taken: list[bool], start: int, height: int, top: int) -> int | None:
    u = start
    while u + height - 1 <= top:
        blocked = next((v for v in range(u, u + height) if taken[v]), None)
        if blocked is None:
            return u
        u = blocked + 1
    return None


def switch_positions(rack: RackPlan, heights: dict[str, int], u_height: int, reserved_u: int,
                     switch_heights: dict[str, int]) -> Positions:
    """Lowest U of each switch of each entry of `rack.switches` (`switch_heights`: U per catalog key): stacked
    from the top of the free U downwards, filling the highest free run before the next — as plan/switches.py
    books them, ⌊run / U⌋ switches per free run, highest first."""
    taken = _stack(rack, heights, u_height, reserved_u)[1]
    cursor = len(taken) - 1  # the highest U below the reserved ones
    out: list[tuple[int | None, ...]] = []
    for placed in rack.switches:
        height = switch_heights[placed.switch]
        positions: list[int | None] = []
        for _ in range(placed.count):
            start = _highest_free_run(taken, cursor, height)
            if start is None:
                positions.append(None)
                continue
            for u in range(start, start + height):
                taken[u] = True
            positions.append(start)
            cursor = start - 1
        out.append(tuple(positions))
    return tuple(out)


def _highest_free_run(taken: list[bool], start: int, height: int) -> int | None:
    """The lowest U of the highest run of `height` free U at or below `start`."""
    free = 0
    for u in range(start, 0, -1):
        free = free + 1 if not taken[u] else 0
        if free == height:
            return u
    return None
