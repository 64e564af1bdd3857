"""What the targets require of a blueprint beyond its shape: the target (and each pool's) is registered, a target's
section and pool fields appear only where that target is in use, a facility only where a target has one, pools
use the hardware kind of the target that owns their nodes, then each target's own checks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import get_args

from clusterforge.catalog import Catalog, Switch
from clusterforge.core.errors import Problem, shown
from clusterforge.core.hints import closest, did_you_mean
from clusterforge.files.yamlsource import PathKey, Source
from clusterforge.model import Cluster, Pool, SwitchedFabric, TargetFabric
from clusterforge.target_kernel.model import owned_pool_fields
from clusterforge.target_kernel.protocol import Target
from clusterforge.target_kernel.stages import blueprint_part


def _unknown(path: PathKey, name: str, known: Iterable[str], source: Source) -> Problem:
    return source.problem(path, f"unknown target {shown(name)}", did_you_mean(name, list(known)))


def _owner(cluster: Cluster, pool: Pool, targets: dict[str, Target]) -> Target | None:
    """The target that owns a pool's nodes: its own `target`, else the cluster's (None: not registered)."""
    return targets.get(pool.target or cluster.target)


def target_problems(cluster: Cluster, source: Source, targets: dict[str, Target]) -> Iterator[Problem]:
    """The targets exist; sections, pool fields, facilities and fabrics of targets not in use are absent; then
    each target in use checks what it needs."""
    target = targets.get(cluster.target)
    if target is None:
        yield _unknown(("target",), cluster.target, targets, source)
        return
    in_use = {target.name: target}
    for i, pool in enumerate(cluster.pools):
        if pool.target is None:
            continue
        owner = targets.get(pool.target)
        if owner is None:
            yield _unknown(("pools", i, "target"), pool.target, targets, source)
        else:
            in_use.setdefault(owner.name, owner)
    yield from _pool_field_problems(cluster, source, targets)
    for other in targets.values():
        section = blueprint_part(other).section
        if other.name not in in_use and section and getattr(cluster, section, None) is not None:
            yield source.problem((section,), f"the `{section}:` section needs target: {other.name}",
                                 f"set target: {other.name} on the cluster, or on the pools that run there")
    if cluster.site is not None and not any(t.facility for t in in_use.values()):
        sites = " or ".join(t.name for t in targets.values() if t.facility)
        yield source.problem(("site",), f"a `site:` (facility) applies to target: {sites} only")
    kind = cluster.fabric.kind if cluster.fabric is not None else None
    owner = next((t for t in targets.values() if kind in blueprint_part(t).exclusive_fabrics), target)
    if (isinstance(cluster.fabric, TargetFabric) and owner is target
            and kind not in blueprint_part(target).exclusive_fabrics):
        yield source.problem(("fabric", "kind"), f"no target offers fabric kind {kind}",
                             "use infiniband, roce or ethernet")
    elif owner is not target:
        yield source.problem(("fabric", "kind"), f"fabric kind {kind} is {owner.title}-only",
                             "use infiniband, roce or ethernet")
    for used in in_use.values():
        yield from blueprint_part(used).problems(cluster, source)


def _pool_field_problems(cluster: Cluster, source: Source, targets: dict[str, Target]) -> Iterator[Problem]:
    """A target's own pool field given on a pool another target owns."""
    owners = owned_pool_fields(targets)
    for i, pool in enumerate(cluster.pools):
        mine = _owner(cluster, pool, targets)
        for name in sorted(pool.model_fields_set & owners.keys()):
            if mine is not None and owners[name] is not mine:
                yield source.problem(("pools", i, name), f"{name} applies to target: {owners[name].name} only")


def catalog_problems(cluster: Cluster, catalog: Catalog, source: Source, targets: dict[str, Target]
                     ) -> list[Problem]:
    """Hardware keys exist and are of the kind the target owning the pool uses; the fabric's switch is a switch."""
    out: list[Problem] = []
    for i, pool in enumerate(cluster.pools):
        target = _owner(cluster, pool, targets)
        if target is None:
            continue  # target_problems names the unknown target
        want = target.hardware
        path: PathKey = ("pools", i, "hardware")
        if pool.hardware not in catalog:
            out.append(catalog.unknown(pool.hardware, source, path))
            continue
        entry = catalog.get(pool.hardware)
        if not isinstance(entry, want):
            same_kind = [k for k, e in catalog.items() if isinstance(e, want)]
            suggestion = closest(pool.hardware, same_kind)
            kind = str(get_args(want.model_fields["kind"].annotation)[0])  # server, instance
            article = "an" if kind[0] in "aeiou" else "a"
            hint = f"did you mean {suggestion}?" if suggestion else f"use {article} {kind} from the catalog"
            what = (f"a {entry.kind}; target {target.name} needs {article} {kind}" if entry.kind != kind else
                    f"{article} {kind} of target {getattr(entry, 'provider', '')}; target {target.name} needs "
                    f"{article} {kind} of its own")
            out.append(source.problem(path, f"{shown(pool.hardware)} is {what}", hint))
    fabric = cluster.fabric
    if isinstance(fabric, SwitchedFabric):
        path = ("fabric", "switch")
        if fabric.switch not in catalog:
            out.append(catalog.unknown(fabric.switch, source, path))
        elif not isinstance(catalog.get(fabric.switch), Switch):
            out.append(source.problem(path, f"{shown(fabric.switch)} is not a switch"))
    return out
