"""The inventory side of a comparison: group vars key by key, hosts added, removed, moved between groups or with
vars that differ (one change per var, naming every host where it does), and hardware swapped under a host."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clusterforge.day2.changes import Change
from clusterforge.day2.effects import (
    CONTROLLER_GROUP,
    GROUPS_CONTROLLER,
    GROUPS_OTHER,
    HARDWARE_CHANGED,
    HOST_ADDED,
    HOST_REMOVED,
    deployed_facts,
    group_var_effects,
    host_var_effect,
)
from clusterforge.day2.rendered import Host, Rendered
from clusterforge.day2.scope import Scope, keys, text, value_text

PER_HOST = "(per host)"  # a var whose old or new value differs between the hosts of one change




def _differs(key: str, before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether a var differs: added, removed or changed (a deployment's fact only when both sides have it)."""
    if key in deployed_facts() and (key not in before or key not in after):
        return False
    return key not in before or key not in after or before[key] != after[key]


def group_vars_changes(old: Rendered, new: Rendered, scope: Scope) -> Iterator[Change]:
    for key in keys(old.group_vars, new.group_vars):
        if _differs(key, old.group_vars, new.group_vars):
            before, after = value_text(old.group_vars, key), value_text(new.group_vars, key)
            yield from scope.changes("group_vars", key, before, after, group_var_effects(key))


def _common(values: list[Any], absent: list[bool]) -> str | None:
    """One value for several hosts: theirs when they share it (None: absent on all), else PER_HOST."""
    if all(absent):
        return None
    texts = {None if gone else text(value) for value, gone in zip(values, absent, strict=True)}
    return texts.pop() if len(texts) == 1 else PER_HOST


def host_differs(before: Host, after: Host) -> bool:
    return set(before.groups) != set(after.groups) or any(
        _differs(key, before.vars, after.vars) for key in keys(before.vars, after.vars))


def _host_vars(old: Rendered, new: Rendered, both: list[str], scope: Scope) -> Iterator[Change]:
    """One change per var that differs on some host, naming every host where it does."""
    differing: dict[str, list[str]] = {}
    for name in both:
        before, after = old.hosts[name].vars, new.hosts[name].vars
        for key in keys(before, after):
            if _differs(key, before, after):
                differing.setdefault(key, []).append(name)
    for key, hosts in differing.items():
        olds, news = [old.hosts[h].vars for h in hosts], [new.hosts[h].vars for h in hosts]
        yield from scope.changes("hosts.yml", key, _common([v.get(key) for v in olds], [key not in v for v in olds]),
                                 _common([v.get(key) for v in news], [key not in v for v in news]),
                                 (host_var_effect(key),), hosts)


def _host_groups(old: Rendered, new: Rendered, both: list[str], scope: Scope) -> Iterator[Change]:
    moved: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for name in both:
        before, after = old.hosts[name].groups, new.hosts[name].groups
        if set(before) != set(after):
            moved.setdefault((before, after), []).append(name)
    for (before, after), hosts in moved.items():
        only_controller = set(before) ^ set(after) <= {CONTROLLER_GROUP}
        yield from scope.changes("hosts.yml", "groups", ",".join(before), ",".join(after),
                                 (GROUPS_CONTROLLER if only_controller else GROUPS_OTHER,), hosts)


def inventory_changes(old: Rendered, new: Rendered, scope: Scope) -> Iterator[Change]:
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
