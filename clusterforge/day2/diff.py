"""The comparison of two renders: every changed setting with what applying it takes and on which hosts.

Each file is compared as what it means, not as text: the SLURM files entry by entry and node by node, the
inventory host by host and var by var, the group vars key by key, a target's config (the Pulumi stack config) key
by key as the target declares it, a target's resources file (what its deployment builds) resource by resource
(clusterforge.day2.resource_diff); any other file line by line. What a change takes comes from
clusterforge.render.change_classes; the inventory's side is clusterforge.day2.inventory_diff, what both share
clusterforge.day2.scope, the result clusterforge.day2.changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.core.hostlist import compress
from clusterforge.day2.changes import Change, Diff, PhysicalDelta
from clusterforge.day2.inventory_diff import group_vars_changes, host_differs, inventory_changes, pool_vars_changes
from clusterforge.day2.rendered import GROUP_VARS_FILE, HOSTS_FILE, Rendered, conf_entries
from clusterforge.day2.resource_diff import resource_changes
from clusterforge.day2.scope import Scope, keys, value_text
from clusterforge.render.change_classes import NAMED_LINES, UNCLASSIFIED, Action, config_table
from clusterforge.render.manifest import MANIFEST

__all__ = ["Action", "Change", "Diff", "PhysicalDelta", "compare"]

_UNITS = ("kW", "U", "kg")


def short_name(path: str) -> str:
    """How a change names its file: `slurm.conf`, `group_vars`, `hosts.yml`, a target's config folder (`pulumi`),
    else the path."""
    if path == GROUP_VARS_FILE:
        return "group_vars"
    if path == HOSTS_FILE:
        return "hosts.yml"
    table = config_table(path)
    if table is not None and table.config_dir is not None:
        return table.config_dir.rstrip("/")
    return path.removeprefix("slurm/")


# ---------------------------------------------------------------------------------------------------------------
# SLURM files


def _slurm_file(path: str, old_text: str, new_text: str, scope: Scope) -> Iterator[Change]:
    name = path.removeprefix("slurm/")
    named = NAMED_LINES if name == "slurm.conf" else NAMED_LINES | {"name"}
    old, new = conf_entries(old_text, named), conf_entries(new_text, named)
    table = "keys" if name == "slurm.conf" else "whole"
    for key in keys(old.entries, new.entries):
        before, after = old.entries.get(key), new.entries.get(key)
        if before != after:
            yield from scope.changes(name, key, before, after,
                                     scope.effects(path, table, key, UNCLASSIFIED, before, after))
    yield from _nodes(path, old.nodes, new.nodes, scope)


def _nodes(path: str, old: dict[str, str], new: dict[str, str], scope: Scope) -> Iterator[Change]:
    """NodeName lines node by node: nodes joining or leaving slurm.conf, and a node whose own line changed, take
    what the file's manifest entry says (`joins`, `changed`). (A node that joins another file reads it when its
    slurmd first starts.)"""
    name = path.removeprefix("slurm/")
    joins = [n for n in new if n not in old]
    leaves = [n for n in old if n not in new]
    if name == "slurm.conf":
        moved = scope.effects(path, "nodes", "joins", UNCLASSIFIED)
        if joins:
            yield from scope.changes(name, f"NodeName={compress(joins)}", None, new[joins[0]], moved)
        if leaves:
            yield from scope.changes(name, f"NodeName={compress(leaves)}", old[leaves[0]], None, moved)
    groups: dict[tuple[str, str], list[str]] = {}
    for node, line in new.items():
        if node in old and old[node] != line and node in scope.new.hosts:
            groups.setdefault((old[node], line), []).append(node)
    for (before, after), nodes in groups.items():
        yield from scope.changes(name, f"NodeName={compress(nodes)}", before, after,
                                 scope.effects(path, "nodes", "changed", UNCLASSIFIED), nodes)


# ---------------------------------------------------------------------------------------------------------------
# A target's config file (the Pulumi stack config) and other files


def _target_config(path: str, old_text: str, new_text: str, scope: Scope) -> Iterator[Change]:
    """A target's rendered config key by key, read as the target reads it, classed by the manifests."""
    table = config_table(path)
    if table is None or table.config_entries is None:
        yield from _other(path, old_text, new_text, scope)
        return
    before, after = dict(table.config_entries(old_text)), dict(table.config_entries(new_text))
    for key in keys(before, after):
        if (key in before, before.get(key)) == (key in after, after.get(key)):
            continue
        declared = scope.effects(path, "keys", key, UNCLASSIFIED)
        if declared == (UNCLASSIFIED,) and table.config is not None and table.config(key) is None:
            continue  # not a setting (the target says so): nothing to apply
        yield from scope.changes(short_name(path), key, value_text(before, key), value_text(after, key), declared)


def _lines(file_text: str) -> list[str]:
    """A file's lines but the generated-by header, which names the blueprint's path rather than a setting."""
    lines = file_text.splitlines()
    return lines[1:] if lines and lines[0].startswith(("# generated by clusterforge", "; generated by")) else lines


def _other(path: str, old_text: str | None, new_text: str | None, scope: Scope) -> Iterator[Change]:
    before, after = _lines(old_text or ""), _lines(new_text or "")
    if old_text is not None and new_text is not None and sorted(before) == sorted(after):
        return
    kept_before, kept_after = set(before), set(after)
    gone = sum(line not in kept_after for line in before)
    came = sum(line not in kept_before for line in after)
    yield from scope.changes(short_name(path), "(lines)",
                             None if old_text is None else f"{gone} line(s) only in the old",
                             None if new_text is None else f"{came} line(s) only in the new",
                             scope.effects(path, "whole", "", UNCLASSIFIED))


def _files(old: Rendered, new: Rendered, scope: Scope) -> Iterator[Change]:
    for path in keys(old.files, new.files):
        before, after = old.files.get(path), new.files.get(path)
        if path in (HOSTS_FILE, GROUP_VARS_FILE, MANIFEST) or before == after:
            continue
        entry = scope.entry(path)
        compared = entry.compared if entry is not None else "lines"
        if compared == "slurm":
            yield from _slurm_file(path, before or "", after or "", scope)
        elif compared == "config":
            yield from _target_config(path, before or "", after or "", scope)
        elif compared == "vars":
            yield from pool_vars_changes(path, before or "", after or "", scope)
        elif compared == "resources":
            yield from resource_changes(path, before or "", after or "", scope)
        else:
            yield from _other(path, before, after, scope)


def _physical(old: Rendered, new: Rendered) -> tuple[PhysicalDelta, ...]:
    """The plan's figures that moved (none when either side was read from a directory: it has no plan)."""
    if not old.physical or not new.physical:
        return ()
    out = []
    for key in keys(old.physical, new.physical):
        before, after = old.physical.get(key, 0.0), new.physical.get(key, 0.0)
        if round(before, 3) != round(after, 3):
            what, _, unit = key.rpartition(" ")
            out.append(PhysicalDelta(what, before, after, unit) if unit in _UNITS else
                       PhysicalDelta(key, before, after, ""))
    return tuple(out)


def compare(old: Rendered, new: Rendered) -> Diff:
    """What changing a running cluster from render OLD to render NEW takes, change by change."""
    scope = Scope(new, old)
    changes = (*_files(old, new, scope), *group_vars_changes(old, new, scope), *inventory_changes(old, new, scope))
    hardware = bool(old.hardware and new.hardware)  # compared only when both came from a blueprint
    changed = tuple(name for name in new.hosts if name in old.hosts and (
        host_differs(old.hosts[name], new.hosts[name])
        or (hardware and old.hardware.get(name) != new.hardware.get(name))))
    old_nodes, new_nodes = _slurm_nodes(old), _slurm_nodes(new)
    return Diff(tuple(name for name in new.hosts if name not in old.hosts),
                tuple(name for name in old.hosts if name not in new.hosts), changed, changes, _physical(old, new),
                tuple(n for n in new_nodes if n not in old_nodes and n not in new.hosts),
                tuple(n for n in old_nodes if n not in new_nodes and n not in old.hosts))


def _slurm_nodes(rendered: Rendered) -> dict[str, str]:
    """The nodes slurm.conf's NodeName lines name: with power saving, nodes no inventory lists (SLURM starts them
    when jobs need them), which a count of hosts alone would miss."""
    return conf_entries(rendered.files.get("slurm/slurm.conf", ""), NAMED_LINES).nodes
