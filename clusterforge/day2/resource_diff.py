"""A target's resources file compared resource by resource (clusterforge.render.resource_file): what its deployment
builds, so that a file system grown, a pool's instance type or its capacity reservation changed is a change with
its action, as a slurm.conf key is. The target's manifest entry classes each key (`pool gpu.instance_type`) and each
resource's presence (`fsx`: added, removed, or rebuilt as another kind).

A change reaches the nodes the resource serves: for a setting, those it serves before and after (a node the change
adds is launched with the new setting, so it is not interrupted); for a resource removed, those it served. When one
setting's change replaces the resource and loses its data, the resource's other changed settings are listed with
that replacement: they are the new resource's, not changes made to the old one in place.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from clusterforge.core.hostlist import expand
from clusterforge.day2.changes import Change
from clusterforge.day2.scope import Scope, keys
from clusterforge.render.change_classes import UNCLASSIFIED, Action
from clusterforge.render.resource_file import Resource, read


def label(path: str) -> str:
    """How a change names the file: its name without the extension (`resources`)."""
    return PurePosixPath(path).stem


def _nodes(resource: Resource | None) -> list[str]:
    return expand(resource.nodes) if resource is not None and resource.nodes else []


def resource_changes(path: str, old_text: str, new_text: str, scope: Scope) -> Iterator[Change]:
    """Every resource added, removed or rebuilt as another kind, and every setting changed, with its effects."""
    old = read(old_text, path) if old_text else {}
    new = read(new_text, path) if new_text else {}
    file = label(path)
    for name in keys(old, new):
        before, after = old.get(name), new.get(name)
        old_nodes, new_nodes = _nodes(before), _nodes(after)
        if before is None or after is None or before.kind != after.kind:
            kinds = (before.kind if before else None, after.kind if after else None)
            reached = new_nodes if before is None else old_nodes if after is None else _both(old_nodes, new_nodes)
            yield from scope.changes(file, name, *kinds, scope.effects(path, "keys", name, UNCLASSIFIED, *kinds),
                                     tuple(reached))
            continue
        served = tuple(_both(old_nodes, new_nodes))
        changed = [(f"{name}.{setting}", before.setting(setting), after.setting(setting))
                   for setting in keys(before.settings, after.settings)
                   if before.setting(setting) != after.setting(setting)]
        effects = [scope.effects(path, "keys", key, UNCLASSIFIED, old_value, new_value)
                   for key, old_value, new_value in changed]
        lost = next((found for found in effects if max(e.action for e in found) == Action.LOSE_DATA), None)
        for (key, old_value, new_value), found in zip(changed, effects, strict=True):
            if lost is not None and max(e.action for e in found) < Action.LOSE_DATA:
                found = lost  # the resource is replaced: its other settings are the new one's, not changes of it
            yield from scope.changes(file, key, old_value, new_value, found, served)


def _both(old: list[str], new: list[str]) -> list[str]:
    """The nodes in both, in NEW's order."""
    kept = set(old)
    return [node for node in new if node in kept]
