"""Cross-field shape checks: names that must exist, be unique, or match the target. No physics here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from clusterforge.catalog import Catalog, Switch
from clusterforge.errors import Problem, shown
from clusterforge.hints import closest, did_you_mean
from clusterforge.model.blueprint import Cluster, SwitchedFabric
from clusterforge.model.slurm_references import slurm_problems
from clusterforge.targets import registered
from clusterforge.yamlsource import PathKey, Source


def _duplicates(names: list[str], paths: Callable[[], Iterable[PathKey]], what: str, source: Source
                ) -> Iterator[Problem]:
    """A problem for each repeated name; `paths` (the names' paths, in order) is walked only when one repeats,
    so a 100,000-GPU hall does not build a path per feed just to find none."""
    if len(set(names)) == len(names):
        return
    first: dict[str, PathKey] = {}
    for path, name in zip(paths(), names, strict=True):
        if name in first:
            line = source.line_of(first[name])
            yield source.problem(path, f"duplicate {what} name {shown(name)} (first on line {line})")
        else:
            first[name] = path


def _unknown(path: PathKey, what: str, name: str, known: Iterable[str], source: Source) -> Problem:
    return source.problem(path, f"unknown {what} {shown(name)}", did_you_mean(name, list(known)))


def reference_problems(cluster: Cluster, source: Source) -> list[Problem]:
    """Every dangling or duplicated name and every section that does not fit the target."""
    out: list[Problem] = []
    pool_names = [p.name for p in cluster.pools]
    out += _duplicates(pool_names, lambda: (("pools", i, "name") for i in range(len(pool_names))), "pool", source)
    parts = cluster.slurm.partitions
    part_names = [p.name for p in parts]
    out += _duplicates(part_names, lambda: (("slurm", "partitions", i, "name") for i in range(len(parts))),
                       "partition", source)
    for i, part in enumerate(parts):
        for j, member in enumerate(part.pools):
            if member not in pool_names:
                out.append(_unknown(("slurm", "partitions", i, "pools", j), "pool", member, pool_names, source))
    for i, pool in enumerate(cluster.pools):
        if pool.partition and parts and pool.partition not in part_names:
            out.append(_unknown(("pools", i, "partition"), "partition", pool.partition, part_names, source))
    out += slurm_problems(cluster, source)
    out += _target_problems(cluster, source)
    if cluster.placement and cluster.site is None:
        out.append(source.problem(("placement",), "placement needs a site to place into",
                                  "add site: !include your-site.yaml (or a site: section)"))
    if cluster.site is not None:
        out += _site_problems(cluster, source, pool_names)
    return out


def _target_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    """The target exists; sections, facilities and fabrics of other targets are absent; then its own checks."""
    targets = registered()
    target = targets.get(cluster.target)
    if target is None:
        yield _unknown(("target",), "target", cluster.target, targets, source)
        return
    for other in targets.values():
        if other is not target and other.section and getattr(cluster, other.section, None) is not None:
            yield source.problem((other.section,), f"an `{other.section}:` section needs target: {other.name}")
    if not target.facility and cluster.site is not None:
        sites = " or ".join(t.name for t in targets.values() if t.facility)
        yield source.problem(("site",), f"a `site:` (facility) applies to target: {sites} only")
    kind = cluster.fabric.kind if cluster.fabric is not None else None
    owner = next((t for t in targets.values() if kind in t.exclusive_fabrics), target)
    if owner is not target:
        yield source.problem(("fabric", "kind"), f"fabric kind {kind} is {owner.title}-only",
                             "use infiniband, roce or ethernet")
    yield from target.blueprint_problems(cluster, source)


def _site_problems(cluster: Cluster, source: Source, pool_names: list[str]) -> Iterator[Problem]:
    site = cluster.site
    assert site is not None
    racks = site.racks()
    yield from _duplicates([row.name for row in site.rows],
                           lambda: (("site", "rows", ri, "name") for ri in range(len(site.rows))), "row", source)
    yield from _duplicates([rack.name for _, _, _, rack in racks],
                           lambda: (("site", "rows", ri, "racks", ki, "name") for ri, ki, _, _ in racks),
                           "rack", source)
    yield from _duplicates([feed.name for _, _, _, rack in racks for feed in rack.feeds],
                           lambda: (("site", "rows", ri, "racks", ki, "feeds", fi, "name")
                                    for ri, ki, _, rack in racks for fi in range(len(rack.feeds))), "feed", source)
    panel_names = [p.name for p in site.panels]
    yield from _duplicates(panel_names, lambda: (("site", "panels", i, "name") for i in range(len(panel_names))),
                           "panel", source)
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
            if feed.panel is not None and feed.panel not in panel_names:
                yield _unknown((*base, "feeds", fi, "panel"), "panel", feed.panel, panel_names, source)
        for di, device in enumerate(rack.devices):
            if device.pool not in pool_names:
                yield _unknown((*base, "devices", di, "pool"), "pool", device.pool, pool_names, source)
                continue
            placed[device.pool] += device.count
            first_placement.setdefault(device.pool, (*base, "devices", di, "count"))
    for pool in cluster.pools:
        if pool.name in placed and placed[pool.name] != pool.count:
            yield source.problem(
                first_placement[pool.name],
                f"pool {shown(pool.name)} has {pool.count} nodes but its rack placements add up to {placed[pool.name]}",
                "place every node of the pool, or none and let the planner place them")


def catalog_problems(cluster: Cluster, catalog: Catalog, source: Source) -> list[Problem]:
    """Hardware keys must exist and be of the kind the target uses."""
    out: list[Problem] = []
    target = registered().get(cluster.target)
    if target is None:
        return out  # reference_problems names the unknown target
    want = target.hardware
    for i, pool in enumerate(cluster.pools):
        path: PathKey = ("pools", i, "hardware")
        if pool.hardware not in catalog:
            out.append(catalog.unknown(pool.hardware, source, path))
            continue
        entry = catalog.get(pool.hardware)
        if not isinstance(entry, want):
            same_kind = [k for k, e in catalog.items() if isinstance(e, want)]
            suggestion = closest(pool.hardware, same_kind)
            hint = f"did you mean {suggestion}?" if suggestion else f"use a {want.__name__.lower()} from the catalog"
            out.append(source.problem(
                path, f"{shown(pool.hardware)} is a {entry.kind}; target {cluster.target} needs a "
                f"{want.__name__.lower()}", hint))
    fabric = cluster.fabric
    if isinstance(fabric, SwitchedFabric):
        path = ("fabric", "switch")
        if fabric.switch not in catalog:
            out.append(catalog.unknown(fabric.switch, source, path))
        elif not isinstance(catalog.get(fabric.switch), Switch):
            out.append(source.problem(path, f"{shown(fabric.switch)} is not a switch"))
    return out
