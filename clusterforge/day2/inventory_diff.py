"""The inventory side of a comparison: group vars key by key, hosts added, removed, moved between groups or with
vars that differ (one change per var, naming every host where it does), and hardware swapped under a host."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clusterforge.day2.changes import Change
from clusterforge.day2.rendered import GROUP_VARS_FILE, HOSTS_FILE, Host, Rendered
from clusterforge.day2.scope import Scope, keys, text, value_text
from clusterforge.render.change_classes import (
    CONTROLLER_GROUP,
    UNCLASSIFIED,
    UNCLASSIFIED_HOST,
    deployed_facts,
)
from clusterforge.render.change_effects import Effect

PER_HOST = "(per host)"  # a var whose old or new value differs between the hosts of one change




def _differs(key: str, before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether a var differs: added, removed or changed (a deployment's fact only when both sides have it)."""
    if key in deployed_facts() and (key not in before or key not in after):
        return False
    return key not in before or key not in after or before[key] != after[key]


def _group_effects(key: str, scope: Scope) -> tuple[Effect, ...]:
    """A cluster-wide var's effects as the manifests declare them (group_vars/all.yml's, or hosts.yml's `all`
    vars)."""
    found = scope.effects(GROUP_VARS_FILE, "keys", key, UNCLASSIFIED)
    return found if found != (UNCLASSIFIED,) else scope.effects(HOSTS_FILE, "keys", key, UNCLASSIFIED)


def _host_effect(key: str, scope: Scope, path: str = HOSTS_FILE) -> tuple[Effect, ...]:
    return scope.effects(path, "host_keys", key, UNCLASSIFIED_HOST)


def group_vars_changes(old: Rendered, new: Rendered, scope: Scope) -> Iterator[Change]:
    for key in keys(old.group_vars, new.group_vars):
        if _differs(key, old.group_vars, new.group_vars):
            before, after = value_text(old.group_vars, key), value_text(new.group_vars, key)
            yield from scope.changes("group_vars", key, before, after, _group_effects(key, scope))


def pool_vars_changes(path: str, old_text: str, new_text: str, scope: Scope) -> Iterator[Change]:
    """A pool group's own vars file (`inventory/group_vars/pool_<name>.yml`) key by key: each var as the
    manifests declare it written per pool, on the pool's hosts."""
    from clusterforge.render.yamlout import load

    before, after = load(old_text) or {}, load(new_text) or {}
    group = path.rsplit("/", 1)[1].removesuffix(".yml")
    hosts = scope.new.members(group) or (scope.old.members(group) if scope.old is not None else ())
    for key in keys(before, after):
        if _differs(key, before, after):
            yield from scope.changes("group_vars", f"{group}: {key}", value_text(before, key),
                                     value_text(after, key), _host_effect(key, scope, path), hosts)


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
                                 _host_effect(key, scope), hosts)


def _host_groups(old: Rendered, new: Rendered, both: list[str], scope: Scope) -> Iterator[Change]:
    moved: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for name in both:
        before, after = old.hosts[name].groups, new.hosts[name].groups
        if set(before) != set(after):
            moved.setdefault((before, after), []).append(name)
    for (before, after), hosts in moved.items():
        only_controller = set(before) ^ set(after) <= {CONTROLLER_GROUP}
        yield from scope.changes("hosts.yml", "groups", ",".join(before), ",".join(after),
                                 _membership("groups-controller" if only_controller else "groups", scope), hosts)


def _membership(what: str, scope: Scope) -> tuple[Effect, ...]:
    """What a host joining, leaving or moving takes, as hosts.yml's manifest entry declares (`added`, `removed`,
    `groups`, `groups-controller`, `hardware`)."""
    return scope.effects(HOSTS_FILE, "hosts", what, UNCLASSIFIED_HOST)


def inventory_changes(old: Rendered, new: Rendered, scope: Scope) -> Iterator[Change]:
    for name, host in new.hosts.items():
        if name not in old.hosts:
            yield from scope.changes("hosts.yml", name, None, ",".join(host.groups), _membership("added", scope),
                                     (name,))
    for name, host in old.hosts.items():
        if name not in new.hosts:
            yield from scope.changes("hosts.yml", name, ",".join(host.groups), None, _membership("removed", scope),
                                     (name,))
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
            yield from scope.changes("pools", "hardware", before, after, _membership("hardware", scope), hosts)
