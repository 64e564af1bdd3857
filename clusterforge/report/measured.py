"""Planned beside measured: the BMC readings of a Prometheus export summed by rack and by feed, against the
budgets the gate holds the design to.

The budgets are the gate's own figures, not new ones: a rack may draw `physics.electrical.rack_kw` (either side
alone carries it, PWR-002, and its load split over its feeds stays within the weakest, PWR-001; the planner
packs against the same figure) or its density contract where lower (RCK-006), a feed its usable kW
(`Context.feed_kw`, PWR-001), and an inlet the room's limit (`site.max_inlet_c`, or its ASHRAE class's
maximum, as CLG-005 reads it). A reading belongs to the rack
its `rack` label names, else to the rack the plan put its node in; to the feed its `feed` label names (a feed
of that rack, by the blueprint's feed name, e.g. `a01-a`). A rack's readings without a feed label are split
evenly over its feeds, as PWR-001 splits a rack's load. Over is decided as the gate decides it
(`physics.budget.exceeds`: at the unit's resolution).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.hostlist import compress
from clusterforge.model import Rack, Site
from clusterforge.operations.next_steps import next_step
from clusterforge.physics import Electrical
from clusterforge.physics.budget import exceeds
from clusterforge.physics.electrical import rack_kw
from clusterforge.pipeline.analysis import Analysis
from clusterforge.policies.context import Context
from clusterforge.policies.domains.cooling import room_inlet_c
from clusterforge.report.prometheus import INLET, Export, Sample

NAMED = 10  # names shown of a list that may run to thousands (unknown racks, nodes without a reading)


@dataclass(frozen=True)
class Draw:
    """One rack or feed: what the plan puts on it, the budget the gate allows it and what it measured."""

    rack: str
    name: str  # the rack's name, or the feed's
    planned_kw: float  # the plan's nameplate load (a feed: its even share of the rack's)
    budget_kw: float
    measured_kw: float
    nodes: int  # nodes whose readings are summed here

    @property
    def share(self) -> float:
        """Measured over budget (1.0 and more when a rack with no budget draws anything)."""
        if self.budget_kw:
            return self.measured_kw / self.budget_kw
        return float("inf") if self.measured_kw else 0.0

    @property
    def over(self) -> bool:
        return exceeds(self.measured_kw, self.budget_kw, "kW")


@dataclass(frozen=True)
class Inlet:
    """The hottest inlet reading of a rack, and which node gave it."""

    rack: str
    max_c: float
    node: str
    limit_c: float | None

    @property
    def over(self) -> bool:
        return self.limit_c is not None and exceeds(self.max_c, self.limit_c, "°C")


@dataclass(frozen=True)
class Unread:
    """The nodes of one pool that have no power reading: how many of how many, and the first of them."""

    pool: str
    count: int
    total: int
    first: str  # a hostlist of the first NAMED ranges
    more: int  # nodes left out of `first`


@dataclass(frozen=True)
class Measured:
    """Everything the page and the command's summary say about the readings."""

    files: tuple[str, ...]
    racks: tuple[Draw, ...]  # every planned rack, in blueprint order
    feeds: tuple[Draw, ...]  # every feed of those racks
    inlets: dict[str, Inlet]  # rack -> its hottest reading
    inlet_limit_c: float | None
    readings: int  # power readings summed into a rack
    nodes_read: int  # nodes of the plan with a power reading
    nodes: int  # nodes of the plan
    unread: tuple[Unread, ...]  # per pool, those with nodes without a power reading
    unknown_racks: tuple[tuple[str, int], ...]  # a rack label the plan lacks -> its series (first NAMED)
    unknown_rack_count: int
    unknown_feeds: tuple[tuple[str, int], ...]  # "rack/feed" the plan lacks -> its series (first NAMED)
    unknown_feed_count: int
    unplaced: int  # readings with no rack label whose node the plan does not place in a rack
    moved: int  # readings whose rack label differs from the rack the plan put their node in
    duplicates: int  # series of a node read twice (the newest is kept)
    other: int  # series of other metrics, left out
    stale: int  # series with no value (NaN)

    @property
    def racks_over(self) -> list[Draw]:
        return [d for d in self.racks if d.over]

    @property
    def feeds_over(self) -> list[Draw]:
        return [d for d in self.feeds if d.over]

    @property
    def inlets_over(self) -> list[Inlet]:
        return [i for i in self.inlets.values() if i.over]

    def next_steps(self) -> list[tuple[str, str]]:
        """(what is over, what the operator does next) for each kind over its bound, the feed first (it may trip):
        the words are operations/next_steps.py's, as the power alerts' runbooks say them."""
        over = (("feed", self.feeds_over), ("rack", self.racks_over), ("inlet", self.inlets_over))
        return [(kind, next_step("measured", kind)) for kind, found in over if found]


def compare(analysis: Analysis, exports: Sequence[Export]) -> Measured:
    """The exports' readings against the plan's racks and feeds and the site's inlet limit."""
    ctx = Context(analysis.loaded, analysis.plan, analysis.policy.config)
    if ctx.cluster.site is None:
        raise ClusterforgeError(Problem("measured power is compared with racks and feeds, and the blueprint has no "
                                        "site (on-premises racks)", exports[0].file if exports else "<input>"))
    pairs = ctx.racks()
    limit = room_inlet_c(ctx)
    sums = _Sums({rack.name: frozenset(f.name for f in rack.feeds) for _, rack in pairs},
                 {pool.name(run.first + i): run.rack for pool in ctx.plan.nodes for run in pool.runs
                  if run.rack is not None for i in range(run.count)}, limit[0] if limit else None)
    samples, duplicates = _newest([s for e in exports for s in e.samples])
    for sample in samples:
        sums.add(sample)
    electrical, site = ctx.config.electrical, ctx.site
    draws, feeds = [], []
    for load, rack in pairs:
        nodes = sums.rack_nodes.get(rack.name, set())
        unlabelled = sums.unlabelled.get(rack.name, 0.0)
        draws.append(Draw(rack.name, rack.name, load.power_kw, rack_budget_kw(rack, site, electrical),
                          sums.rack_kw.get(rack.name, 0.0), len(nodes)))
        for index, feed in enumerate(rack.feeds):
            key = (rack.name, feed.name)
            fed = sums.feed_nodes.get(key, set()) | (nodes if unlabelled else set())
            feeds.append(Draw(rack.name, feed.name, load.power_kw / len(rack.feeds), ctx.feed_kw(rack, index),
                              sums.feed_kw.get(key, 0.0) + unlabelled / len(rack.feeds), len(fed)))
    all_nodes = {name for pool in ctx.plan.nodes for name in pool.names()}
    unknown_racks, unknown_feeds = Counter(sums.unknown_racks), Counter(sums.unknown_feeds)
    return Measured(
        files=tuple(e.file for e in exports), racks=tuple(draws), feeds=tuple(feeds), inlets=sums.inlets,
        inlet_limit_c=limit[0] if limit else None, readings=sums.readings,
        nodes_read=len(sums.read_nodes & all_nodes), nodes=len(all_nodes), unread=_unread(ctx, sums.read_nodes),
        unknown_racks=tuple(unknown_racks.most_common(NAMED)), unknown_rack_count=len(unknown_racks),
        unknown_feeds=tuple(unknown_feeds.most_common(NAMED)), unknown_feed_count=len(unknown_feeds),
        unplaced=sums.unplaced, moved=sums.moved, duplicates=duplicates, other=sum(e.other for e in exports),
        stale=sum(e.stale for e in exports))


def rack_budget_kw(rack: Rack, site: Site, electrical: Electrical) -> float:
    """What a rack may draw: the kW either side alone carries (PWR-001/002, the planner's), or its density contract
    (RCK-006: the rack's contracted_kw, else the site's contracted_kw_per_rack) when that is lower. The monitoring
    role's RackPowerOverBudget alert holds the rack to the same figure."""
    contract = rack.contracted_kw or site.contracted_kw_per_rack
    kw = rack_kw(rack, electrical)
    return min(kw, contract) if contract is not None else kw


@dataclass
class _Sums:
    """The readings summed by rack and feed as they come: the plan's racks (name -> its feeds' names), the rack
    the plan put each node in, and the inlet limit."""

    feeds_of: dict[str, frozenset[str]]
    node_rack: dict[str, str | None]
    inlet_limit_c: float | None
    rack_kw: dict[str, float] = field(default_factory=dict)
    rack_nodes: dict[str, set[str]] = field(default_factory=dict)
    feed_kw: dict[tuple[str, str], float] = field(default_factory=dict)
    feed_nodes: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    unlabelled: dict[str, float] = field(default_factory=dict)  # a rack's kW without a feed label
    unknown_racks: dict[str, int] = field(default_factory=dict)
    unknown_feeds: dict[str, int] = field(default_factory=dict)
    inlets: dict[str, Inlet] = field(default_factory=dict)
    read_nodes: set[str] = field(default_factory=set)
    readings: int = 0
    unplaced: int = 0
    moved: int = 0

    def add(self, sample: Sample) -> None:
        planned = self.node_rack.get(sample.node) if sample.node else None
        where = sample.rack or planned
        if where is None:
            self.unplaced += 1
            return
        if where not in self.feeds_of:
            self.unknown_racks[where] = self.unknown_racks.get(where, 0) + 1
            return
        self.moved += planned is not None and planned != where
        node = sample.node or "?"
        if sample.metric == INLET:
            best = self.inlets.get(where)
            if best is None or sample.value > best.max_c:
                self.inlets[where] = Inlet(where, sample.value, node, self.inlet_limit_c)
            return
        self.readings += 1
        if sample.node:
            self.read_nodes.add(sample.node)
        kw = sample.value / 1000
        self.rack_kw[where] = self.rack_kw.get(where, 0.0) + kw
        self.rack_nodes.setdefault(where, set()).add(node)
        if sample.feed is None:
            self.unlabelled[where] = self.unlabelled.get(where, 0.0) + kw
        elif sample.feed in self.feeds_of[where]:
            key = (where, sample.feed)
            self.feed_kw[key] = self.feed_kw.get(key, 0.0) + kw
            self.feed_nodes.setdefault(key, set()).add(node)
        else:
            name = f"{where}/{sample.feed}"
            self.unknown_feeds[name] = self.unknown_feeds.get(name, 0) + 1


def _newest(samples: list[Sample]) -> tuple[list[Sample], int]:
    """One sample per metric, node and feed (the newest, else the last given): two Prometheus replicas, or two
    exports of one moment, must not count a node twice. Samples without a node are all kept."""
    kept: dict[tuple[str, str, str | None, str | None], Sample] = {}
    anonymous: list[Sample] = []
    duplicates = 0
    for sample in samples:
        if sample.node is None:
            anonymous.append(sample)
            continue
        key = (sample.metric, sample.node, sample.rack, sample.feed)
        seen = kept.get(key)
        if seen is not None:
            duplicates += 1
            if (seen.time or 0) > (sample.time or 0):
                continue
        kept[key] = sample
    return [*kept.values(), *anonymous], duplicates


def _unread(ctx: Context, read: set[str]) -> tuple[Unread, ...]:
    """Per pool, its nodes with no power reading (powered down by SLURM, or not exporting): the count, and its
    first NAMED runs of consecutive nodes as a hostlist (a powered-down rack is one run)."""
    out = []
    for pool in ctx.plan.nodes:
        missing = [n for n in range(1, pool.count + 1) if pool.name(n) not in read]
        if not missing:
            continue
        runs: list[list[int]] = []
        for number in missing:
            if runs and runs[-1][-1] == number - 1:
                runs[-1].append(number)
            elif len(runs) < NAMED:
                runs.append([number])
            else:
                break
        shown = [pool.name(n) for run in runs for n in run]
        out.append(Unread(pool.pool, len(missing), pool.count, compress(shown), len(missing) - len(shown)))
    return tuple(out)


def ordered(draws: Sequence[Draw], limit: int, hot: frozenset[str] = frozenset()) -> tuple[list[Draw], int]:
    """What a table lists: those over budget (or, a rack, over the inlet limit: `hot`) first, then by share,
    highest first, at most `limit`; and how many it leaves out (a hall of thousands of racks lists the ones
    that matter)."""
    ranked = sorted(draws, key=lambda d: (not (d.over or d.name in hot), -d.share))
    return ranked[:limit], max(0, len(ranked) - limit)
