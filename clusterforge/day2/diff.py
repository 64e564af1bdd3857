"""The comparison of two renders: every changed setting with what applying it takes and on which hosts.

Each file is compared as what it means, not as text: the SLURM files entry by entry and node by node, the
inventory host by host and var by var, the group vars key by key, the Pulumi stack config key by key; any
other file line by line. What a change takes comes from clusterforge.day2.effects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from clusterforge.day2.changes import Change, Diff, PhysicalDelta
from clusterforge.day2.effects import (
    COMPUTE_GROUP,
    CONTROLLER_GROUP,
    GROUPS_CONTROLLER,
    GROUPS_OTHER,
    HARDWARE_CHANGED,
    HOST_ADDED,
    HOST_REMOVED,
    NAMED_LINES,
    NODE_FILE_CHANGED,
    NODE_JOINS,
    STACK_FACTS,
    UNKNOWN_FILE,
    Action,
    Effect,
    Hosts,
    SlurmRole,
    group_var_effects,
    host_var_effect,
    node_changed,
    pulumi_effect,
    slurm_role,
)
from clusterforge.day2.rendered import GROUP_VARS_FILE, HOSTS_FILE, Host, Rendered, conf_entries
from clusterforge.hostlist import compress

__all__ = ["Action", "Change", "Diff", "PhysicalDelta", "compare"]

PER_HOST = "(per host)"  # a var whose old or new value differs between the hosts of one change
_UNITS = ("kW", "U", "kg")


def text(value: Any) -> str:
    """A setting's value as one string: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


class _Scope:
    """Resolves the table's host selectors on the new render."""

    def __init__(self, new: Rendered) -> None:
        self.new = new

    def gpu(self, vendor: str | None = None) -> tuple[str, ...]:
        """Hosts with GPUs (of a vendor), and hosts an inventory says run the vendor's driver role anyway
        (`nvidia_driver_enabled`: the lab's GPU-less compute nodes install the driver to exercise the role)."""
        default = self.new.group_vars.get("gpu_vendor") or "nvidia"
        forced = "nvidia_driver_enabled" if vendor in (None, "nvidia") else None
        return tuple(name for name, host in self.new.hosts.items()
                     if (_number(host.vars.get("gpu_count")) > 0
                         and (vendor is None or (host.vars.get("gpu_vendor") or default) == vendor))
                     or (forced and host.vars.get(forced) is True))

    def dbd(self) -> tuple[str, ...]:
        host = self.new.dbd_host
        return (host,) if host else self.new.members(CONTROLLER_GROUP)[:1]

    def efa(self) -> tuple[str, ...]:
        hosts = tuple(name for name, host in self.new.hosts.items() if host.vars.get("efa_interfaces"))
        return hosts or (self.new.members(COMPUTE_GROUP) if self.new.group_vars.get("efa_enabled") else ())

    def hosts(self, selector: Hosts, changed: Sequence[str] = ()) -> tuple[str, ...]:
        if selector == "changed":
            return tuple(changed)
        if selector in ("controllers", "compute"):
            return self.new.members(CONTROLLER_GROUP if selector == "controllers" else COMPUTE_GROUP)
        if selector in ("gpu", "nvidia", "amd"):
            return self.gpu(None if selector == "gpu" else selector)
        picks = {"all": lambda: tuple(self.new.hosts), "dbd": self.dbd, "efa": self.efa, "none": tuple}
        return picks[selector]()

    def changes(self, file: str, key: str, old: str | None, new: str | None, effects: Iterable[Effect],
                changed: Sequence[str] = ()) -> Iterator[Change]:
        for effect in effects:
            yield Change(file, key, old, new, effect.action, self.hosts(effect.hosts, changed), effect.daemon,
                         effect.why)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _keys(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The keys of both, OLD's order first."""
    return list(dict.fromkeys([*old, *new]))


def short_name(path: str) -> str:
    """How a change names its file: `slurm.conf`, `group_vars`, `hosts.yml`, `pulumi`, else the path."""
    if path == GROUP_VARS_FILE:
        return "group_vars"
    if path == HOSTS_FILE:
        return "hosts.yml"
    if path.startswith("pulumi/"):
        return "pulumi"
    return path.removeprefix("slurm/")


# ---------------------------------------------------------------------------------------------------------------
# SLURM files


def _slurm_file(name: str, old_text: str, new_text: str, role: SlurmRole, scope: _Scope) -> Iterator[Change]:
    named = NAMED_LINES if name == "slurm.conf" else NAMED_LINES | {"name"}
    old, new = conf_entries(old_text, named), conf_entries(new_text, named)
    for key in _keys(old.entries, new.entries):
        before, after = old.entries.get(key), new.entries.get(key)
        if before != after:
            yield from scope.changes(name, key, before, after, role.conf_effects(name, key, before, after))
    yield from _nodes(name, old.nodes, new.nodes, scope)


def _nodes(name: str, old: dict[str, str], new: dict[str, str], scope: _Scope) -> Iterator[Change]:
    """NodeName lines node by node: nodes joining or leaving slurm.conf take a reconfigure, and so does a node
    whose line changed (slurm.conf(5) NODE CONFIGURATION); a node's line of another file (gres.conf) restarts its
    slurmd. (A node that joins another file reads it when its slurmd first starts.)"""
    joins = [n for n in new if n not in old]
    leaves = [n for n in old if n not in new]
    if name == "slurm.conf":
        if joins:
            yield from scope.changes(name, f"NodeName={compress(joins)}", None, new[joins[0]], (NODE_JOINS,))
        if leaves:
            yield from scope.changes(name, f"NodeName={compress(leaves)}", old[leaves[0]], None, (NODE_JOINS,))
    groups: dict[tuple[str, str], list[str]] = {}
    for node, line in new.items():
        if node in old and old[node] != line and node in scope.new.hosts:
            groups.setdefault((old[node], line), []).append(node)
    for (before, after), nodes in groups.items():
        effect = node_changed() if name == "slurm.conf" else NODE_FILE_CHANGED
        yield from scope.changes(name, f"NodeName={compress(nodes)}", before, after, (effect,), nodes)


# ---------------------------------------------------------------------------------------------------------------
# The inventory


def _differs(key: str, before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether a var differs: added, removed or changed (a stack's fact only when both sides have it)."""
    if key in STACK_FACTS and (key not in before or key not in after):
        return False
    return key not in before or key not in after or before[key] != after[key]


def _value(values: dict[str, Any], key: str) -> str | None:
    """A var's value as text, None when it is absent."""
    return text(values[key]) if key in values else None


def _group_vars(old: Rendered, new: Rendered, scope: _Scope) -> Iterator[Change]:
    for key in _keys(old.group_vars, new.group_vars):
        if _differs(key, old.group_vars, new.group_vars):
            yield from scope.changes("group_vars", key, _value(old.group_vars, key), _value(new.group_vars, key),
                                     group_var_effects(key))


def _common(values: list[Any], absent: list[bool]) -> str | None:
    """One value for several hosts: theirs when they share it (None: absent on all), else PER_HOST."""
    if all(absent):
        return None
    texts = {None if gone else text(value) for value, gone in zip(values, absent, strict=True)}
    return texts.pop() if len(texts) == 1 else PER_HOST


def _host_differs(before: Host, after: Host) -> bool:
    return set(before.groups) != set(after.groups) or any(
        _differs(key, before.vars, after.vars) for key in _keys(before.vars, after.vars))


def _host_vars(old: Rendered, new: Rendered, both: list[str], scope: _Scope) -> Iterator[Change]:
    """One change per var that differs on some host, naming every host where it does."""
    differing: dict[str, list[str]] = {}
    for name in both:
        before, after = old.hosts[name].vars, new.hosts[name].vars
        for key in _keys(before, after):
            if _differs(key, before, after):
                differing.setdefault(key, []).append(name)
    for key, hosts in differing.items():
        olds, news = [old.hosts[h].vars for h in hosts], [new.hosts[h].vars for h in hosts]
        yield from scope.changes("hosts.yml", key, _common([v.get(key) for v in olds], [key not in v for v in olds]),
                                 _common([v.get(key) for v in news], [key not in v for v in news]),
                                 (host_var_effect(key),), hosts)


def _host_groups(old: Rendered, new: Rendered, both: list[str], scope: _Scope) -> Iterator[Change]:
    moved: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for name in both:
        before, after = old.hosts[name].groups, new.hosts[name].groups
        if set(before) != set(after):
            moved.setdefault((before, after), []).append(name)
    for (before, after), hosts in moved.items():
        only_controller = set(before) ^ set(after) <= {CONTROLLER_GROUP}
        yield from scope.changes("hosts.yml", "groups", ",".join(before), ",".join(after),
                                 (GROUPS_CONTROLLER if only_controller else GROUPS_OTHER,), hosts)


def _inventory(old: Rendered, new: Rendered, scope: _Scope) -> Iterator[Change]:
    for name, host in new.hosts.items():
        if name not in old.hosts:
            yield from scope.changes("hosts.yml", name, None, ",".join(host.groups), (HOST_ADDED,), (name,))
    for name, host in old.hosts.items():
        if name not in new.hosts:
            yield from scope.changes("hosts.yml", name, ",".join(host.groups), None, (HOST_REMOVED,), (name,))
    both = [name for name in new.hosts if name in old.hosts]
    yield from _host_groups(old, new, both, scope)
    yield from _host_vars(old, new, both, scope)
    if old.hardware and new.hardware:
        swapped: dict[tuple[str, str], list[str]] = {}
        for name in both:
            before, after = old.hardware.get(name), new.hardware.get(name)
            if before is not None and after is not None and before != after:
                swapped.setdefault((before, after), []).append(name)
        for (before, after), hosts in swapped.items():
            yield from scope.changes("pools", "hardware", before, after, (HARDWARE_CHANGED,), hosts)


# ---------------------------------------------------------------------------------------------------------------
# The Pulumi stack config and other files


def _pulumi(old_text: str, new_text: str, scope: _Scope) -> Iterator[Change]:
    from clusterforge.render.yamlout import load

    before = (load(old_text) or {}).get("config") or {} if old_text else {}
    after = (load(new_text) or {}).get("config") or {} if new_text else {}
    for key in _keys(before, after):
        effect = pulumi_effect(key)
        if effect is None or (key in before, before.get(key)) == (key in after, after.get(key)):
            continue
        yield from scope.changes("pulumi", key, _value(before, key), _value(after, key), (effect,))


def _lines(file_text: str) -> list[str]:
    """A file's lines but the generated-by header, which names the blueprint's path rather than a setting."""
    lines = file_text.splitlines()
    return lines[1:] if lines and lines[0].startswith(("# generated by clusterforge", "; generated by")) else lines


def _other(path: str, old_text: str | None, new_text: str | None, scope: _Scope) -> Iterator[Change]:
    before, after = _lines(old_text or ""), _lines(new_text or "")
    if old_text is not None and new_text is not None and sorted(before) == sorted(after):
        return
    kept_before, kept_after = set(before), set(after)
    gone = sum(line not in kept_after for line in before)
    came = sum(line not in kept_before for line in after)
    yield from scope.changes(short_name(path), "(lines)", None if old_text is None else f"{gone} lines differ",
                             None if new_text is None else f"{came} lines differ", (UNKNOWN_FILE,))


def _files(old: Rendered, new: Rendered, scope: _Scope) -> Iterator[Change]:
    role = slurm_role()
    for path in _keys(old.files, new.files):
        before, after = old.files.get(path), new.files.get(path)
        if path in (HOSTS_FILE, GROUP_VARS_FILE) or before == after:
            continue
        name = path.removeprefix("slurm/")
        if path.startswith("slurm/") and name in role.notify:
            yield from _slurm_file(name, before or "", after or "", role, scope)
        elif path.startswith("pulumi/"):
            yield from _pulumi(before or "", after or "", scope)
        else:
            yield from _other(path, before, after, scope)


def _physical(old: Rendered, new: Rendered) -> tuple[PhysicalDelta, ...]:
    """The plan's figures that moved (none when either side was read from a directory: it has no plan)."""
    if not old.physical or not new.physical:
        return ()
    out = []
    for key in _keys(old.physical, new.physical):
        before, after = old.physical.get(key, 0.0), new.physical.get(key, 0.0)
        if round(before, 3) != round(after, 3):
            what, _, unit = key.rpartition(" ")
            out.append(PhysicalDelta(what, before, after, unit) if unit in _UNITS else
                       PhysicalDelta(key, before, after, ""))
    return tuple(out)


def compare(old: Rendered, new: Rendered) -> Diff:
    """What changing a running cluster from render OLD to render NEW takes, change by change."""
    scope = _Scope(new)
    changes = (*_files(old, new, scope), *_group_vars(old, new, scope), *_inventory(old, new, scope))
    hardware = bool(old.hardware and new.hardware)  # compared only when both came from a blueprint
    changed = tuple(name for name in new.hosts if name in old.hosts and (
        _host_differs(old.hosts[name], new.hosts[name])
        or (hardware and old.hardware.get(name) != new.hardware.get(name))))
    return Diff(tuple(name for name in new.hosts if name not in old.hosts),
                tuple(name for name in old.hosts if name not in new.hosts), changed, changes, _physical(old, new))
