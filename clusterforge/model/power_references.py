"""The site's power topology as names: cords land on declared panels or power sources, each element's `fed_by`
and `catcher` name declared ones, and nothing feeds itself through a loop. Shape only; what the elements carry
is the power rules' (docs/power-topologies.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from clusterforge.core.errors import Problem, shown
from clusterforge.core.hints import Kinds, did_you_mean
from clusterforge.files.yamlsource import PathKey, Source
from clusterforge.model.site import Panel, PowerSource, Site

Element = Panel | PowerSource


def elements(site: Site) -> list[tuple[PathKey, Element]]:
    """Every declared upstream element with its path: panels, then power sources, in file order."""
    return [*((("site", "panels", i), p) for i, p in enumerate(site.panels)),
            *((("site", "power_sources", i), s) for i, s in enumerate(site.power_sources))]


def topology_problems(site: Site, source: Source, kinds: Kinds, known: Sequence[str]) -> Iterator[Problem]:
    """Dangling `fed_by` and `catcher` names, an element that names itself or its catcher among its sources, a
    catcher with no sources to back, and loops (`p1` fed by `ups-1` fed by `p1`). `known`: every element's name
    (panels and power sources share one namespace: a cord or a `fed_by` may name either)."""
    names = set(known)
    declared = elements(site)
    for path, element in declared:
        for j, name in enumerate(element.fed_by):
            if name not in names:
                message = f"unknown power source or panel {shown(name)}"
                if kinds.kept(message):
                    yield source.problem((*path, "fed_by", j), message, did_you_mean(name, known))
            elif name == element.name:
                yield source.problem((*path, "fed_by", j), f"{shown(name)} is fed by itself",
                                     "name the sources upstream of it")
        catcher = element.catcher
        if catcher is None:
            continue
        if catcher not in names:
            message = f"unknown power source or panel {shown(catcher)}"
            if kinds.kept(message):
                yield source.problem((*path, "catcher"), message, did_you_mean(catcher, known))
        elif not element.fed_by:
            yield source.problem((*path, "catcher"), f"{shown(element.name)} has a catcher but no fed_by: a "
                                 "catcher picks up the load when the sources it backs are lost",
                                 "name the sources that normally feed it in fed_by")
        elif catcher == element.name or catcher in element.fed_by:
            yield source.problem((*path, "catcher"), f"catcher {shown(catcher)} is also among the sources of "
                                 f"{shown(element.name)}", "a catcher is a separate reserve: name another source")
    yield from _loops(declared, names, source)


def _loops(declared: list[tuple[PathKey, Element]], names: set[str], source: Source) -> Iterator[Problem]:
    """One problem per loop through fed_by and catcher (depth-first, each element visited once)."""
    upstream = {e.name: [n for n in (*e.fed_by, *([e.catcher] if e.catcher else [])) if n in names and n != e.name]
                for _, e in declared}
    where = {e.name: path for path, e in declared}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for _, first in declared:
        if first.name in state:
            continue
        path = [first.name]
        stack = [iter(upstream.get(first.name, ()))]
        state[first.name] = 1
        while stack:
            above = next(stack[-1], None)
            if above is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(above) == 1:
                loop = [*path[path.index(above):], above]
                yield source.problem((*where[path[-1]], "fed_by"), "power topology loops: "
                                     + " → ".join(shown(n) for n in loop),
                                     "an element cannot draw from what it feeds")
            elif above not in state:
                state[above] = 1
                path.append(above)
                stack.append(iter(upstream.get(above, ())))
