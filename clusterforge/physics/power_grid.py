"""The site's power topology as the power rules judge it: which single failures are credible, and what each one
takes out (docs/power-topologies.md).

The elements are the site's panels and power sources (UPS, switchboard, generator, utility), each drawing from
its `fed_by` (the load split evenly over the live ones) and, when all of those are lost, from its `catcher`.
Where an element declares no `fed_by` the site says nothing above it, and the A/B side of each cord on it (or of
a cord that names no panel at all) stands for the cord's path: "side A" is then one more element whose loss
takes out every such A cord, as a 2N design's A path (UPS, switchgear) does. A panel that declares `fed_by` is
judged by what it declares, so a ring or N+1 design whose A/B labels mean nothing is never failed by them.

Credible failures are the loss of any one element: a single failure, as concurrent maintainability (Uptime
Institute Tier III) and fault tolerance (Tier IV) require a design to ride through. Two at once are not judged.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from clusterforge.model.site import Feed, Panel, PowerSource, Site
from clusterforge.physics.assumptions import Electrical
from clusterforge.physics.electrical import derated_kw

SIDES = ("A", "B")
KIND_LABEL = {"ups": "UPS", "switchboard": "switchboard", "generator": "generator", "utility": "utility feed"}


class Cord(NamedTuple):
    """Where one feed of a rack draws from: the element it lands on (-1: none declared) and the side element whose
    loss also takes it out (-1: its element declares what feeds it, so its side label is no path)."""

    element: int
    side: int


@dataclass
class Grid:
    """Elements by index: the site's panels, then its power sources, then the two sides (failure domains only:
    they carry no load of their own and have no rating)."""

    names: list[str]
    labels: list[str]
    usable_kw: list[float | None]
    inputs: list[tuple[int, ...]]
    catcher: list[int]
    index: dict[str, int]
    _dead: dict[int, frozenset[int]] = field(default_factory=dict, repr=False)
    _cords: dict[tuple[str | None, str], Cord] = field(default_factory=dict, repr=False)
    declared: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.declared = len(self.names) - len(SIDES)  # panels and power sources; the sides come after them

    def side(self, name: str) -> int:
        return self.declared + SIDES.index(name)

    @cached_property
    def children(self) -> list[list[int]]:
        """Elements that draw from each element, as a source or as their catcher."""
        out: list[list[int]] = [[] for _ in self.names]
        for e in range(self.declared):
            for p in (*self.inputs[e], *([self.catcher[e]] if self.catcher[e] >= 0 else [])):
                out[p].append(e)
        return out

    @cached_property
    def height(self) -> list[int]:
        """Each element's place bottom-up: above everything that draws from it, so a pass in rising height sees
        an element's whole load before handing it on. A loop (refused at validation) is cut where it closes."""
        height = [0] * len(self.names)
        state = [0] * len(self.names)  # 1: being worked out, 2: done
        for start in range(self.declared):
            stack = [(start, iter(self.children[start]))]
            state[start] = 1
            while stack:
                e, below = stack[-1]
                c = next(below, None)
                if c is None:
                    state[e] = 2
                    stack.pop()
                    if stack:
                        parent = stack[-1][0]
                        height[parent] = max(height[parent], height[e] + 1)
                elif state[c] == 0:
                    state[c] = 1
                    stack.append((c, iter(self.children[c])))
                elif state[c] == 2:
                    height[e] = max(height[e], height[c] + 1)
        return height

    def dead(self, failed: int) -> frozenset[int]:
        """The declared elements lost with `failed`: itself and every element all of whose sources and catcher
        are lost (none for a side, which takes out cords, not elements)."""
        found = self._dead.get(failed)
        if found is not None:
            return found
        dead = {failed} if failed < self.declared else set()
        queue = [(-self.height[c], c) for c in self.children[failed]] if dead else []
        heapq.heapify(queue)  # upstream first: an element is judged once all its sources are
        while queue:
            _, e = heapq.heappop(queue)
            if e in dead:
                continue
            backup = self.catcher[e]
            if all(p in dead for p in self.inputs[e]) and (backup < 0 or backup in dead):
                dead.add(e)
                for c in self.children[e]:
                    heapq.heappush(queue, (-self.height[c], c))
        found = self._dead[failed] = frozenset(dead)
        return found

    @cached_property
    def killers(self) -> list[tuple[int, ...]]:
        """For each declared element, the failures that take it out (itself among them), in failure order."""
        out: list[list[int]] = [[] for _ in range(self.declared)]
        for f in range(self.declared):
            for e in self.dead(f):
                out[e].append(f)
        return [tuple(sorted(k)) for k in out]

    def cord(self, feed: Feed) -> Cord:
        """Where a feed draws from (worked out once per panel and side: a hall has thousands of feeds)."""
        key = (feed.panel, feed.side)
        found = self._cords.get(key)
        if found is None:
            element = self.index.get(feed.panel, -1) if feed.panel is not None else -1
            path_by_side = element < 0 or not self.inputs[element]
            found = self._cords[key] = Cord(element, self.side(feed.side) if path_by_side else -1)
        return found

    def cord_killers(self, cord: Cord) -> tuple[int, ...]:
        """The failures that take a cord out."""
        own = self.killers[cord.element] if cord.element >= 0 else ()
        return (*own, cord.side) if cord.side >= 0 else own


def grid(site: Site, electrical: Electrical) -> Grid:
    """The site's elements with their ratings: a panel's usable kW (derated as every feed), a source's rated kW."""
    declared: list[Panel | PowerSource] = [*site.panels, *site.power_sources]
    names = [e.name for e in declared]
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)  # a duplicate name is a validation error; the first one counts
    labels = [f"panel {e.name}" if isinstance(e, Panel) else f"{KIND_LABEL[e.kind]} {e.name}" for e in declared]
    usable: list[float | None] = [derated_kw(e, electrical) if isinstance(e, Panel) else e.kw for e in declared]
    inputs = [tuple(dict.fromkeys(index[n] for n in e.fed_by if n in index)) for e in declared]
    catcher = [index.get(e.catcher, -1) if e.catcher is not None else -1 for e in declared]
    for side in SIDES:
        names.append(side)
        labels.append(f"side {side}")
        usable.append(None)
        inputs.append(())
        catcher.append(-1)
    return Grid(names, labels, usable, inputs, catcher, index)
