"""Compact topology/tree: the spines and cores SLURM cannot tell apart, described once.

slurmctld reads topology.conf into a table of switches and computes the hop distance between every pair of
them (Floyd–Warshall, cubic in the switch count), at every start and every reconfigure. A 100,000-GPU fat
tree written switch by switch costs it 6 s of CPU on 144-port switches (2,258 switches) and 84 s on 64-port
ones (5,079), and triples its memory (benchmarks/README.md). Its scheduler
reads, per switch, only the level, the nodes below it, the parent and the distances between leaf-level
switches; and above SLURM's leaf level (the rail groups of plan/slurm.py) a fat tree is regular: every spine
of a pod reaches the same rail groups, and any two pods meet at some core.

So at each level above the leaf level the compact tree has one switch per class of leaf-level switches that
meet at that level or below: `pod-001` for the spines of one pod, `cores` for all cores. Any two nodes then
share a switch at the same lowest level as in the full tree, and leaf-level switches are as many hops apart
(tests/test_topology_compact.py checks both, and against the wiring). That holds when every class is the
reach of one switch of its level. Where it is not (rail groups that straddle pods), the classes are the
distinct reaches at each level instead: the same lowest common level for every pair, but a switch may then
have two parents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clusterforge.plan.topology import switch_names

CLASS_PREFIX = {"spine": "pod"}  # several classes of spines at one level are the fabric's pods


@dataclass(frozen=True)
class Upper:
    """A switch above SLURM's leaf level, as wired: its tier and the switches right below it."""

    name: str
    tier: str  # spine | core
    children: tuple[str, ...]


@dataclass(frozen=True)
class Merged:
    """A switch of the compact tree above the leaf level: the switches below it and those it stands for."""

    name: str
    children: tuple[str, ...]
    members: tuple[str, ...]  # the switches of the full tree it stands for (of its level, within its reach)


Reach = frozenset[int]  # the leaf-level switches below a switch, by position


def compact(leaves: Sequence[str], upper: Sequence[Upper]) -> list[Merged]:
    """The compact levels above `leaves` (SLURM's leaf level) for the full tree `upper`, lowest level first."""
    level: dict[str, int] = dict.fromkeys(leaves, 0)
    reach: dict[str, Reach] = {name: frozenset([i]) for i, name in enumerate(leaves)}
    below = {s.name: s.children for s in upper}

    def resolve(name: str) -> None:  # SLURM's own rule: one above the highest child
        if name not in level:
            for child in below[name]:
                resolve(child)
            level[name] = 1 + max(level[c] for c in below[name])
            reach[name] = frozenset().union(*(reach[c] for c in below[name]))

    for switch in upper:
        resolve(switch.name)
    by_level: list[list[Upper]] = [[] for _ in range(max(level.values(), default=0) + 1)]
    for switch in upper:
        by_level[level[switch.name]].append(switch)
    tree = _partitions(len(leaves), by_level, reach)
    if tree is not None:
        return _tree(leaves, by_level, tree, reach)
    return _distinct(leaves, by_level, level, reach)


def _partitions(count: int, by_level: list[list[Upper]], reach: Mapping[str, Reach]) -> list[list[Reach]] | None:
    """Per level, the classes of leaf-level switches that share a switch at that level or below; None when
    a class is not the reach of one switch (then sharing is not transitive and no tree says it)."""
    root = list(range(count))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    out: list[list[Reach]] = [[frozenset([i]) for i in range(count)]]
    for switches in by_level[1:]:
        for switch in switches:
            first, *rest = sorted(reach[switch.name])
            for other in rest:
                root[find(other)] = find(first)
        members: dict[int, list[int]] = {}
        for i in range(count):
            members.setdefault(find(i), []).append(i)
        classes = [frozenset(m) for m in members.values()]
        reaches = {reach[s.name] for s in switches} | set(out[-1])
        if any(c not in reaches for c in classes):
            return None
        out.append(classes)
    return out


def _names(switches: Sequence[Upper], count: int) -> list[str]:
    """`spines`/`cores` for one class at a level; `pod-001`... for several classes of spines."""
    tier = switches[0].tier if switches else "switch"
    return [f"{tier}s"] if count == 1 else switch_names(CLASS_PREFIX.get(tier, f"{tier}-group"), count)


def _tree(leaves: Sequence[str], by_level: list[list[Upper]], classes: list[list[Reach]],
          reach: Mapping[str, Reach]) -> list[Merged]:
    """One switch per class, its children the classes one level down inside it."""
    name_of: dict[tuple[int, Reach], str] = {(0, frozenset([i])): name for i, name in enumerate(leaves)}
    out: list[Merged] = []
    for depth in range(1, len(by_level)):
        switches = by_level[depth]
        for name, members in zip(_names(switches, len(classes[depth])), classes[depth], strict=True):
            name_of[depth, members] = name
            children = tuple(name_of[depth - 1, c] for c in classes[depth - 1] if c <= members)
            out.append(Merged(name, children, tuple(s.name for s in switches if reach[s.name] <= members)))
    return out


def _distinct(leaves: Sequence[str], by_level: list[list[Upper]], level: Mapping[str, int],
              reach: Mapping[str, Reach]) -> list[Merged]:
    """One switch per distinct reach at each level, its children those of the switches it stands for."""
    name_of: dict[tuple[int, Reach], str] = {(0, frozenset([i])): name for i, name in enumerate(leaves)}
    out: list[Merged] = []
    for depth in range(1, len(by_level)):
        switches = by_level[depth]
        classes = list(dict.fromkeys(reach[s.name] for s in switches))
        for name, members in zip(_names(switches, len(classes)), classes, strict=True):
            name_of[depth, members] = name
            stands_for = [s for s in switches if reach[s.name] == members]
            children = dict.fromkeys(name_of[level[c], reach[c]] for s in stands_for for c in s.children)
            out.append(Merged(name, tuple(children), tuple(s.name for s in stands_for)))
    return out
