"""The compact topology/tree gives SLURM the answers the full tree gives (plan/compact.py).

slurmctld's topology/tree reads, per switch, its level (0 for a switch with nodes, else one above its highest
child), the nodes below it, its parent, and the hop distances between switches (switch_record.c). Scheduling
asks which nodes share a switch at the lowest level and how far leaf-level switches are apart. For every pair
of nodes (a sample on the 12,500-node fabric) the lowest level at which they share a switch must be the same in
the compact tree as in the full tree (every spine and core on its own) and as in the wiring itself (a node under
each of its rail leaves); leaf-level switches must be as many hops apart; and the compact tree must be a tree.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import combinations

import pytest

from clusterforge.core.hostlist import expand
from clusterforge.plan import Plan
from clusterforge.plan.compact import Upper, compact
from clusterforge.plan.model import SlurmSwitch, Topology
from clusterforge.plan.slurm import full_switches, switches
from tests.plan_builders import plan_of
from tests.policies.builders import design


def pools(*pairs: tuple[str, str, int]) -> list[dict]:
    return [{"name": name, "hardware": hardware, "count": count, "partition": "train"}
            for name, hardware, count in pairs]


def fabric(nodes: int, hardware: str = "dgx-h100", **settings: object) -> dict:
    data = design(pools(("gpu", hardware, nodes)))
    data["fabric"].update(settings)
    return data


MIXED = design(pools(("gpu", "dgx-h100", 20), ("gb", "gb200-nvl72", 30)))
# name -> (blueprint, leaf-level switches hold disjoint sets of leaves, so the wiring is comparable)
FABRICS: dict[str, tuple[dict, bool]] = {
    "1 tier": (fabric(4), True),
    "2 tiers, rail-optimized": (fabric(64), True),
    "2 tiers, not rail-optimized": (fabric(64, rail_optimized=False), True),
    "3 tiers, 4 full pods": (fabric(512), True),
    "3 tiers, a partial pod": (fabric(300), True),
    "3 tiers, a partial pod, not rail-optimized": (fabric(300, rail_optimized=False), True),
    "3 tiers at 2:1": (fabric(600, oversubscription=2.0), True),
    "3 tiers forced on one pod": (fabric(16, tiers=3), True),
    "GB200 rail groups straddling pods": (fabric(40, "gb200-nvl72"), True),
    "GB200 straddling pods, not transitive": (fabric(96, "gb200-nvl72"), True),
    "GB200 not rail-optimized (nodes across leaves)": (fabric(40, "gb200-nvl72", rail_optimized=False), False),
    "mixed NIC counts (rail groups share leaves)": (MIXED, False),
}
# rail groups that straddle pods: a compact switch may have two parents there (plan/compact.py); the mixed
# fabric's 4-NIC NVL72 trays and 8-NIC DGX share leaves across a pod boundary
NOT_TRANSITIVE = {"GB200 straddling pods, not transitive", "mixed NIC counts (rail groups share leaves)"}


@dataclass(eq=False)  # hashed by identity, for the caches
class Slurm:
    """A topology.conf as slurmctld reads it."""

    leaf_of: dict[str, str]  # node -> its leaf-level switch
    level: dict[str, int]
    below: dict[str, int]  # switch -> bitmask of the leaf-level switches under it
    bit: dict[str, int]  # leaf-level switch -> its bit
    children: dict[str, list[str]]

    @cached_property
    def reaches(self) -> list[tuple[int, set[int]]]:
        """(level, the distinct masks of its switches), lowest level first: the min below is over the same
        switches, asked once per mask."""
        out: dict[int, set[int]] = {}
        for name, mask in self.below.items():
            out.setdefault(self.level[name], set()).add(mask)
        return sorted(out.items())

    @cache  # noqa: B019 (one instance per test)
    def meet(self, x: str, y: str) -> int | None:
        both = self.bit[x] | self.bit[y]
        return next((level for level, masks in self.reaches if any(m & both == both for m in masks)), None)

    def lowest_common(self, a: str, b: str) -> int | None:
        """The lowest level of a switch with both nodes below it (None: no switch has both)."""
        return self.meet(*sorted((self.leaf_of[a], self.leaf_of[b])))

    @cached_property
    def links(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {s: set() for s in self.level}
        for parent, kids in self.children.items():
            for kid in kids:
                out[parent].add(kid)
                out[kid].add(parent)
        return out

    def hops(self, source: str) -> dict[str, int]:
        """Hops from `source` to every switch over links up and down (slurmctld's switches_dist)."""
        dist = {source: 0}
        queue = deque([source])
        while queue:
            here = queue.popleft()
            for there in self.links[here] - dist.keys():
                dist[there] = dist[here] + 1
                queue.append(there)
        return dist


def read(switches: Sequence[SlurmSwitch]) -> Slurm:
    leaf_of = {node: s.name for s in switches if s.nodes for node in expand(s.nodes)}
    bit = {s.name: 1 << i for i, s in enumerate(x for x in switches if x.nodes)}
    children = {s.name: expand(s.switches) for s in switches if not s.nodes}
    level: dict[str, int] = dict.fromkeys(bit, 0)
    below = dict(bit)
    while len(level) < len(switches):  # as switch_record_validate: resolved once every child is
        for name, kids in children.items():
            if name not in level and all(k in level for k in kids):
                level[name] = 1 + max(level[k] for k in kids)
                below[name] = 0
                for kid in kids:
                    below[name] |= below[kid]
    return Slurm(leaf_of, level, below, bit, children)


TIER_LEVEL = {"leaf": 0, "spine": 1, "core": 2}


class Wired:
    """The fabric as wired: a node under each of its rail leaves, leaves under spines, spines under cores."""

    def __init__(self, topology: Topology) -> None:
        self.rails = {node: frozenset(r) for node, r in topology.rails.items()}
        self.tier = {s.name: TIER_LEVEL[s.tier] for s in topology.switches}
        self.parents: dict[str, list[str]] = {}
        for switch in topology.switches:
            for child in switch.children:
                self.parents.setdefault(child, []).append(switch.name)

    @cache  # noqa: B019 (one instance per test)
    def above(self, rails: frozenset[str]) -> frozenset[str]:
        seen, frontier = set(rails), list(rails)
        while frontier:
            frontier = [p for s in frontier for p in self.parents.get(s, ()) if p not in seen]
            seen.update(frontier)
        return frozenset(seen)

    @cache  # noqa: B019
    def meet(self, x: frozenset[str], y: frozenset[str]) -> int | None:
        return min((self.tier[s] for s in self.above(x) & self.above(y)), default=None)

    def lowest_common(self, a: str, b: str) -> int | None:
        return self.meet(self.rails[a], self.rails[b])


def node_pairs(nodes: list[str], limit: int = 200_000) -> Iterable[tuple[str, str]]:
    """Every pair of nodes, or a fixed sample of near and far pairs when there are more than `limit`."""
    if len(nodes) * (len(nodes) - 1) // 2 <= limit:
        yield from combinations(nodes, 2)
        return
    pick = random.Random(16)
    for _ in range(1_500):
        i = pick.randrange(len(nodes))
        yield nodes[i], nodes[pick.randrange(len(nodes))]  # far, mostly
        yield nodes[i], nodes[min(len(nodes) - 1, i + pick.randrange(1, 800))]  # same rail group or pod


def rail_optimized(data: dict) -> bool:
    return bool(data["fabric"].get("rail_optimized", True))


def tree(plan: Plan, data: dict) -> tuple[SlurmSwitch, ...]:
    """The compact tree of the plan's wiring. An all-NVL72 cluster renders topology/block instead (the blocks
    replace the tree in slurm.conf), but its fabric is the same fat tree, compacted the same way."""
    assert plan.slurm is not None
    return plan.slurm.switches or switches(plan.topology, rail_optimized(data))


def check(plan: Plan, data: dict, wiring: bool, pair_limit: int = 200_000, sources: int | None = None) -> None:
    assert plan.topology is not None and plan.slurm is not None
    full_switches_ = full_switches(plan.topology, rail_optimized(data))
    full, small = read(full_switches_), read(tree(plan, data))
    assert small.leaf_of == full.leaf_of  # SLURM's leaf level is kept as it is
    wired = Wired(plan.topology)
    nodes = list(full.leaf_of)
    for a, b in node_pairs(nodes, pair_limit):
        expected = full.lowest_common(a, b)
        assert small.lowest_common(a, b) == expected, (a, b)
        if wiring:
            assert wired.lowest_common(a, b) == expected, (a, b)
    leaves = list(full.bit)
    for source in leaves[:sources]:
        far_full, far_small = full.hops(source), small.hops(source)
        assert {s: far_small.get(s) for s in leaves} == {s: far_full.get(s) for s in leaves}, source


@pytest.mark.parametrize("name", list(FABRICS))
def test_compact_tree_answers_as_the_full_tree(name: str) -> None:
    data, wiring = FABRICS[name]
    check(plan_of(data), data, wiring)


@pytest.mark.parametrize("name", list(FABRICS))
def test_compact_tree_is_a_tree_with_fewer_switches(name: str) -> None:
    data, _ = FABRICS[name]
    plan = plan_of(data)
    assert plan.topology is not None and plan.slurm is not None
    full = full_switches(plan.topology, rail_optimized(data))
    switches = tree(plan, data)
    assert len(switches) <= len(full)
    parents: dict[str, int] = {}
    for switch in switches:
        for child in expand(switch.switches):
            parents[child] = parents.get(child, 0) + 1
    if name not in NOT_TRANSITIVE:
        assert set(parents.values()) <= {1}, "a switch under two parents"
    roots = [s for s in switches if s.name not in parents]
    assert len(roots) == 1 if name not in NOT_TRANSITIVE else roots, "one root"
    stands_for = [m for s in switches for m in expand(s.members)]
    assert sorted(stands_for) == sorted(s.name for s in full if not s.nodes)  # every spine and core, once


def test_100k_gpu_fabric_is_94_switches_for_1131() -> None:
    """The 100,000-GPU benchmark fabric (12,500 DGX H100 with 400G NICs, Q3400 split to 288 × 400G, three
    tiers): 88 rail groups of 144 nodes, 5 pods (695 spines), 348 cores. (At the Q3400's native 144 × 800G it
    was 174 rail groups, 1,389 spines, 695 cores: 195 switches for 2,258.) 3,000 sampled pairs of nodes; hops
    from 24 leaf-level switches to all."""
    data = fabric(12_500, switch="q3400")
    plan = plan_of(data)
    assert plan.topology is not None and plan.slurm is not None and plan.fabric is not None
    assert (plan.fabric.radix, plan.fabric.split) == (288, True)
    assert len(full_switches(plan.topology, True)) == 88 + 695 + 348
    names = [s.name for s in plan.slurm.switches]
    assert len(names) == 94 and names[87:90] == ["su-088", "pod-001", "pod-002"] and names[-1] == "cores"
    check(plan, data, wiring=True, pair_limit=0, sources=24)


def lowest_common_levels(leaves: list[str], upper: list[Upper], merged: bool) -> dict[tuple[str, str], int]:
    switches = [SlurmSwitch(name, nodes=f"n-{name}") for name in leaves]
    if merged:
        switches += [SlurmSwitch(m.name, switches=",".join(m.children)) for m in compact(leaves, upper)]
    else:
        switches += [SlurmSwitch(u.name, switches=",".join(u.children)) for u in upper]
    tree = read(switches)
    return {(a, b): level for a, b in combinations(tree.leaf_of, 2)
            if (level := tree.lowest_common(a, b)) is not None}


def test_sharing_that_is_not_transitive_keeps_each_reach() -> None:
    # a and b meet at s1, b and c at s2, a and c only at the core: no tree says that, so the spines stay apart
    leaves = ["a", "b", "c"]
    upper = [Upper("s1", "spine", ("a", "b")), Upper("s2", "spine", ("b", "c")), Upper("x", "core", ("s1", "s2"))]
    merged = compact(leaves, upper)
    assert [(m.name, m.children, m.members) for m in merged] == [
        ("pod-001", ("a", "b"), ("s1",)), ("pod-002", ("b", "c"), ("s2",)), ("cores", ("pod-001", "pod-002"), ("x",))]
    assert lowest_common_levels(leaves, upper, True) == lowest_common_levels(leaves, upper, False)


def test_spines_of_one_reach_become_one_switch() -> None:
    leaves = ["su-1", "su-2", "su-3", "su-4"]
    upper = [Upper(f"spine-{i}", "spine", ("su-1", "su-2") if i < 3 else ("su-3", "su-4")) for i in range(6)]
    upper += [Upper(f"core-{i}", "core", ("spine-0", "spine-3") if i else ("spine-1",)) for i in range(3)]
    merged = compact(leaves, upper)
    assert [(m.name, m.children, m.members) for m in merged] == [
        ("pod-001", ("su-1", "su-2"), ("spine-0", "spine-1", "spine-2")),
        ("pod-002", ("su-3", "su-4"), ("spine-3", "spine-4", "spine-5")),
        ("cores", ("pod-001", "pod-002"), ("core-0", "core-1", "core-2"))]
