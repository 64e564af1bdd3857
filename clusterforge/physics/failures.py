"""What each element of the power topology carries in normal operation and after each credible single failure,
and the worst of those per element (PWR-006); which of a rack's cords each failure leaves (PWR-002).

A rack's load splits evenly over its live cords, as in normal operation (PWR-001): a rack of N cords puts 1/N of
its load on each, and when a failure takes k of them out the other N − k carry 1/(N − k) each. An element's
load splits the same way over its live sources; its catcher takes all of it when every source is lost. A rack
whose cords are all lost drops its load (PWR-002 reports that).

At the scale of a hall (thousands of racks, hundreds of panels) the work is kept near linear: racks with the same
cords are one group, and a failure touches only the groups with a cord on what it takes out and the elements
above them. Each failure moves load by differences from normal operation, handed up the topology bottom-up.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from clusterforge.model.site import Feed
from clusterforge.physics.assumptions import Electrical
from clusterforge.physics.budget import steps
from clusterforge.physics.electrical import derated_kw
from clusterforge.physics.power_grid import Cord, Grid

NORMAL = -1  # the "failure" of normal operation: nothing lost


class Case(NamedTuple):
    """An element's load in one case, and the element lost in it (NORMAL when none)."""

    kw: float
    lost: int


class _Groups:
    """Racks with identical cords as one load, indexed by what can take a cord of theirs out."""

    def __init__(self, grid: Grid, racks: Iterable[tuple[float, tuple[Cord, ...]]]) -> None:
        total: dict[tuple[Cord, ...], float] = defaultdict(float)
        for kw, cords in racks:
            if kw and cords:
                total[cords] += kw
        self.cords = list(total)
        self.kw = list(total.values())
        self.at: list[list[int]] = [[] for _ in grid.names]  # element or side → groups with a cord on it
        for g, cords in enumerate(self.cords):
            for where in dict.fromkeys(x for cord in cords for x in cord if x >= 0):
                self.at[where].append(g)


def normal_loads(grid: Grid, groups: _Groups) -> list[float]:
    """Every element's load with nothing lost: cords' shares, then each element's load split over its sources."""
    load = [0.0] * len(grid.names)
    for cords, kw in zip(groups.cords, groups.kw, strict=True):
        for cord in cords:
            if cord.element >= 0:
                load[cord.element] += kw / len(cords)
    for e in sorted(range(grid.declared), key=grid.height.__getitem__):
        if grid.inputs[e]:
            share = load[e] / len(grid.inputs[e])
            for p in grid.inputs[e]:
                load[p] += share
    return load


def _changes(grid: Grid, groups: _Groups, normal: list[float], failed: int) -> dict[int, float]:
    """How the load of each surviving element differs from normal operation when `failed` is lost (only the
    elements it changes)."""
    dead = grid.dead(failed)
    inputs_of, height, declared = grid.inputs, grid.height, grid.declared
    delta: dict[int, float] = defaultdict(float)
    affected = {g for where in (*dead, failed) for g in groups.at[where]}
    for g in affected:
        cords, kw = groups.cords[g], groups.kw[g]
        up = [c.element not in dead and c.side != failed for c in cords]
        left = sum(up)
        for cord, alive in zip(cords, up, strict=True):
            if cord.element >= 0 and cord.element not in dead:
                delta[cord.element] += (kw / left if alive else 0.0) - kw / len(cords)
    # hand the differences up, bottom-up: a lost element's normal load leaves its sources; an element that lost a
    # source spreads its new load over the others (or its catcher)
    queue = [(height[e], e) for e in {*delta, *dead, *(c for d in dead for c in grid.children[d])} if e < declared]
    heapq.heapify(queue)
    seen: set[int] = set()
    while queue:
        _, e = heapq.heappop(queue)
        inputs = inputs_of[e]
        if e in seen or not inputs:
            continue
        seen.add(e)
        handed: list[tuple[int, float]]
        if e in dead:
            handed = [(p, -normal[e] / len(inputs)) for p in inputs if p not in dead]
        else:
            live = [p for p in inputs if p not in dead]
            if len(live) == len(inputs):
                change = delta.get(e)
                handed = [(p, change / len(inputs)) for p in inputs] if change else []
            else:
                now = normal[e] + delta[e]
                was = normal[e] / len(inputs)
                handed = [(p, now / len(live) - was) for p in live] if live else [(grid.catcher[e], now)]
        for p, kw in handed:
            delta[p] += kw
            heapq.heappush(queue, (height[p], p))
    return {e: kw for e, kw in delta.items() if e not in dead}


def worst_cases(grid: Grid, racks: Iterable[tuple[float, tuple[Cord, ...]]]) -> list[Case]:
    """For each declared element, its largest load over normal operation and every single failure that leaves it
    standing (the first such failure, in the site's order, where several give the same load to the watt).

    `racks`: each rack's load (kW) and its cords (Grid.cord of each feed, in order)."""
    groups = _Groups(grid, racks)
    normal = normal_loads(grid, groups)
    worst = [Case(normal[e], NORMAL) for e in range(grid.declared)]
    at_watt = [steps(kw, "kW") for kw in normal[:grid.declared]]  # compared to the watt, as every budget is
    failures = [f for f in range(len(grid.names)) if f < grid.declared or groups.at[f]]
    for failed in failures:
        for e, change in _changes(grid, groups, normal, failed).items():
            kw = normal[e] + change
            if (w := steps(kw, "kW")) > at_watt[e]:
                worst[e], at_watt[e] = Case(kw, failed), w
    return worst


def rack_cases(grid: Grid, cords: tuple[Cord, ...]) -> list[tuple[int, tuple[int, ...]]]:
    """Each single failure that takes out at least one of a rack's cords, in failure order, with the indexes of the
    cords it leaves (empty: the rack is lost)."""
    killers = [set(grid.cord_killers(c)) for c in cords]
    failures = sorted({f for k in killers for f in k})
    return [(f, tuple(i for i, k in enumerate(killers) if f not in k)) for f in failures]


class Survivors(NamedTuple):
    """A rack's weakest single failure: the element lost, the indexes of the feeds it leaves (none: the rack is
    lost) and their usable kW together."""

    lost: int
    left: tuple[int, ...]
    usable_kw: float


def weakest_survivors(grid: Grid, cords: tuple[Cord, ...], feeds: list[Feed], electrical: Electrical
                      ) -> Survivors | None:
    """The single failure that leaves a rack the least usable feed capacity: one that takes every cord out first,
    else the smallest Σ usable of the feeds left (on a tie the one that leaves side A, as A/B racks were always
    reported, then the first in the site's order). None when nothing can take a cord out (no cords)."""
    best: Survivors | None = None
    best_key: tuple[bool, int, str] | None = None
    for lost, left in rack_cases(grid, cords):
        usable = sum(derated_kw(feeds[i], electrical) for i in left)
        key = (bool(left), steps(usable, "kW"), "".join(sorted(feeds[i].side for i in left)))
        if best_key is None or key < best_key:
            best, best_key = Survivors(lost, left, usable), key
    return best
