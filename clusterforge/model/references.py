"""Cross-field shape checks: names that must exist or be unique. No physics here; what the targets require is
clusterforge/target_kernel/checks.py."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

from clusterforge.core.errors import Problem, shown
from clusterforge.core.hints import Kinds, and_more, did_you_mean
from clusterforge.files.yamlsource import PathKey, Source
from clusterforge.model.blueprint import Cluster
from clusterforge.model.power_references import elements, topology_problems
from clusterforge.model.slurm_references import slurm_problems


def _duplicates(names: list[str], paths: Callable[[], Iterable[PathKey]], what: str, source: Source, kinds: Kinds
                ) -> Iterator[Problem]:
    """A problem for each repeated name; `paths` (the names' paths, in order) is walked only when one repeats,
    so a 100,000-GPU hall does not build a path per feed just to find none. The first of a name is located once,
    a repeat only when the list will show it (see `_unknown`)."""
    if len(set(names)) == len(names):
        return
    first: dict[str, PathKey] = {}
    said: dict[str, str] = {}
    for path, name in zip(paths(), names, strict=True):
        if name in first:
            if name not in said:
                said[name] = f"duplicate {what} name {shown(name)} (first on line {source.line_of(first[name])})"
            if kinds.kept(said[name]):
                yield source.problem(path, said[name])
        else:
            first[name] = path


@functools.lru_cache(maxsize=4096)  # an alias repeats one name: its message is made once
def _unknown_message(what: str, name: str) -> str:
    return f"unknown {what} {shown(name)}"


def _unknown(path: PathKey, what: str, name: str, known: Sequence[str], source: Source, kinds: Kinds
             ) -> Iterator[Problem]:
    """A dangling name, when the list keeps it: only then is it located and given its hint. The others (an alias
    can repeat one unknown name a hundred thousand times) are only counted (Kinds). `known` is the caller's own
    list, the same for every name of a kind, so hints.closest searches each name once."""
    message = _unknown_message(what, name)
    if kinds.kept(message):
        yield source.problem(path, message, did_you_mean(name, known))


def _more(last: Problem, count: int) -> Problem:
    """The line that stands for `count` more problems like `last` (the one load.from_source writes, too)."""
    return replace(last, message=and_more(last.message, count), hint="")


def reference_problems(cluster: Cluster, source: Source) -> list[Problem]:
    """Every dangling or duplicated name: at most hints.PER_KIND of one kind, located and explained, and a line
    that counts the rest. Names are looked up in sets, so a partition listing thousands of pools costs as much
    with a thousand known pools as with one."""
    kinds = Kinds()
    out: list[Problem] = []
    pool_names = [p.name for p in cluster.pools]
    pools = set(pool_names)
    out += _duplicates(pool_names, lambda: (("pools", i, "name") for i in range(len(pool_names))), "pool", source,
                       kinds)
    parts = cluster.slurm.partitions
    part_names = [p.name for p in parts]
    out += _duplicates(part_names, lambda: (("slurm", "partitions", i, "name") for i in range(len(parts))),
                       "partition", source, kinds)
    for i, part in enumerate(parts):
        for j, member in enumerate(part.pools):
            if member not in pools:
                out += _unknown(("slurm", "partitions", i, "pools", j), "pool", member, pool_names, source, kinds)
    out += _named_once(cluster, source, kinds)
    partitions = set(part_names)
    for i, pool in enumerate(cluster.pools):
        if pool.partition and parts and pool.partition not in partitions:
            out += _unknown(("pools", i, "partition"), "partition", pool.partition, part_names, source, kinds)
    out += _power_save_problems(cluster, source, kinds)
    out += slurm_problems(cluster, source)
    if cluster.placement and cluster.site is None:
        out.append(source.problem(("placement",), "placement needs a site to place into",
                                  "add site: !include your-site.yaml (or a site: section)"))
    if cluster.site is not None:
        out += _site_problems(cluster, source, pool_names, kinds)
    return kinds.capped(out, lambda p: p.message, _more)


def _named_once(cluster: Cluster, source: Source, kinds: Kinds) -> Iterator[Problem]:
    """QOS and accounts: sacctmgr keeps one of each name, so a second entry would silently replace the first."""
    for what, key, names in (("QOS", "qos", [q.name for q in cluster.slurm.qos]),
                             ("account", "accounts", [a.name for a in cluster.slurm.accounts])):
        count = len(names)
        yield from _duplicates(names, functools.partial(_entries, key, count), what, source, kinds)


def _entries(key: str, count: int) -> Iterator[PathKey]:
    return (("slurm", key, i, "name") for i in range(count))


def _site_problems(cluster: Cluster, source: Source, pool_names: list[str], kinds: Kinds) -> Iterator[Problem]:
    site = cluster.site
    assert site is not None
    racks = site.racks()
    yield from _duplicates([row.name for row in site.rows],
                           lambda: (("site", "rows", ri, "name") for ri in range(len(site.rows))), "row", source, kinds)
    yield from _duplicates([rack.name for _, _, _, rack in racks],
                           lambda: (("site", "rows", ri, "racks", ki, "name") for ri, ki, _, _ in racks),
                           "rack", source, kinds)
    yield from _duplicates([feed.name for _, _, _, rack in racks for feed in rack.feeds],
                           lambda: (("site", "rows", ri, "racks", ki, "feeds", fi, "name")
                                    for ri, ki, _, rack in racks for fi in range(len(rack.feeds))), "feed", source,
                           kinds)
    declared = elements(site)  # panels and power sources: a cord may land on either, so one namespace
    panel_names = [element.name for _, element in declared]
    panels, pools = set(panel_names), set(pool_names)
    yield from _duplicates(panel_names, lambda: ((*path, "name") for path, _ in declared),
                           "panel or power source", source, kinds)
    yield from topology_problems(site, source, kinds, panel_names)
    if site.max_inlet_c is not None and site.inlet_class is not None:
        yield source.problem(("site", "inlet_class"), "give max_inlet_c or inlet_class, not both")
    if site.max_supply_water_c is not None and site.facility_water_class is not None:
        yield source.problem(("site", "facility_water_class"),
                             "give max_supply_water_c or facility_water_class, not both")
    placed: Counter[str] = Counter()
    first_placement: dict[str, PathKey] = {}
    for ri, ki, _, rack in racks:
        base: PathKey = ("site", "rows", ri, "racks", ki)
        if rack.reserved_u > rack.u_height:
            yield source.problem((*base, "reserved_u"), f"reserved_u {rack.reserved_u} exceeds u_height "
                                 f"{rack.u_height}")
        for fi, feed in enumerate(rack.feeds):
            if feed.panel is not None and feed.panel not in panels:
                yield from _unknown((*base, "feeds", fi, "panel"), "panel", feed.panel, panel_names, source, kinds)
        for di, device in enumerate(rack.devices):
            if device.pool not in pools:
                yield from _unknown((*base, "devices", di, "pool"), "pool", device.pool, pool_names, source, kinds)
                continue
            placed[device.pool] += device.count
            first_placement.setdefault(device.pool, (*base, "devices", di, "count"))
    for pool in cluster.pools:
        if pool.name in placed and placed[pool.name] != pool.ceiling:
            yield source.problem(
                first_placement[pool.name],
                f"pool {shown(pool.name)} has {pool.ceiling} nodes{' (max_count)' if pool.power_saved else ''} but "
                f"its rack placements add up to {placed[pool.name]}",
                "place every node of the pool, or none and let the planner place them")


def _power_save_problems(cluster: Cluster, source: Source, kinds: Kinds) -> Iterator[Problem]:
    """`count` and `max_count` of each pool, and the partitions `slurm.power_save` names."""
    for i, pool in enumerate(cluster.pools):
        if pool.max_count is None:
            if pool.count == 0:
                yield source.problem(("pools", i, "count"), "count 0 needs a max_count: a pool without power saving "
                                     "has count nodes, always on", "give count ≥ 1, or max_count for nodes powered "
                                     "up on demand")
            continue
        if pool.max_count < pool.count:
            yield source.problem(("pools", i, "max_count"), f"max_count {pool.max_count:,} is below count "
                                 f"{pool.count:,}: count is the nodes always on, max_count the most SLURM may power up",
                                 f"give max_count ≥ {pool.count:,}, or lower count")
        if pool.role != "compute":
            yield source.problem(("pools", i, "max_count"), f"pool {shown(pool.name)} has role {pool.role}: only "
                                 "compute nodes are powered up and down (the controller and login nodes stay on)",
                                 "remove max_count, or give the pool role compute")
    parts = [p.name for p in cluster.slurm.partitions] or list(
        dict.fromkeys(p.partition for p in cluster.pools if p.partition))
    known = set(parts)
    for j, name in enumerate(cluster.slurm.power_save.exclude_partitions):
        if name not in known:
            yield from _unknown(("slurm", "power_save", "exclude_partitions", j), "partition", name, parts, source,
                                kinds)
