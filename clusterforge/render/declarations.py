"""What changing each rendered setting takes, as declared beside what reads it: read, checked and cached here.

Two kinds of file hold the declarations, in one form:

- `roles/<role>/meta/clusterforge.yml` of this checkout (`clusterforge.files.checkout.project_root`), beside the role's
  `meta/argument_specs.yml`: for each variable the role reads and `clusterforge render` writes, what a change of
  it takes; the slurm role's also says what each handler its rendered files notify takes (`slurm_notify`).
- `clusterforge/render/facts.yaml`, shipped with the package: the keys render writes that no role reads (facts
  written for people, Ansible's own connection variables), each with what it is and what a change takes.

A key is declared under `group:` (the effects of a change when it is written cluster-wide: group_vars/all.yml
or hosts.yml's `all` vars; one effect or a list), under `host:` (the one effect when it is written per host or
per pool in hosts.yml), or both. An effect is `{action, hosts, why}` with an optional `daemon`; `hosts: changed`
(the hosts whose own value changed) is for `host:` only. Anything else is a ClusterforgeError naming file:key,
since the files ship with the checkout and a wrong one would misstate every diff.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, get_args

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.render.change_effects import ACTION_NAMES, Effect, FabricHosts, Hosts

BINDING = Path("meta") / "clusterforge.yml"
FACTS = "facts.yaml"  # in the package clusterforge.render
HOSTS: tuple[str, ...] = get_args(get_args(Hosts)[0])  # the named selectors; VendorGpus is for accelerator pins
_EFFECT_KEYS = frozenset({"action", "hosts", "why", "daemon"})


@dataclass(frozen=True)
class Declared:
    """One declaration of a key: where it is (`roles/slurm/meta/clusterforge.yml`, for messages), its effects as a
    cluster-wide var and as a host or pool var (None: not declared as such), and, for a fact, what it is."""

    where: str
    group: tuple[Effect, ...] | None = None
    host: Effect | None = None
    description: str | None = None


@dataclass(frozen=True)
class Bindings:
    """The roles' bindings of one checkout: each key's declaration, and the slurm role's handlers' effects."""

    settings: dict[str, Declared]
    handlers: dict[str, tuple[Effect, ...]]


def _fail(message: str, file: str, path: str = "") -> ClusterforgeError:
    return ClusterforgeError(Problem(message, file, path=path))


def _effect(data: Any, file: str, where: str, group: bool) -> Effect:
    """One effect, `where` its path in `file` (`slurm_version.group[0]`)."""
    if not isinstance(data, dict):
        raise _fail("an effect is a mapping of action, hosts, why (and daemon)", file, where)
    unknown = sorted(str(k) for k in data if k not in _EFFECT_KEYS)
    if unknown:
        raise _fail(f"unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_EFFECT_KEYS))})", file, where)
    action, hosts, why, daemon = data.get("action"), data.get("hosts"), data.get("why"), data.get("daemon")
    if action not in ACTION_NAMES:
        raise _fail(f"action {action!r} is none of {', '.join(ACTION_NAMES)}", file, where)
    if isinstance(hosts, dict) and set(hosts) == {"fabric_of"} and isinstance(hosts["fabric_of"], str):
        hosts = FabricHosts(hosts["fabric_of"][:40])
    elif hosts not in HOSTS:
        raise _fail(f"hosts {hosts!r} is none of {', '.join(HOSTS)}, nor {{fabric_of: KIND}}", file, where)
    if group and hosts == "changed":
        raise _fail("hosts 'changed' names the hosts whose own value changed: a `host:` effect only", file, where)
    if not isinstance(why, str) or not why.strip():
        raise _fail("why: the sentence saying what the change does is missing", file, where)
    if daemon is not None and not isinstance(daemon, str):
        raise _fail("daemon is the name of the daemon it restarts", file, where)
    return Effect(ACTION_NAMES[action], hosts, why, daemon)


def _effects(data: Any, file: str, where: str) -> tuple[Effect, ...]:
    items = data if isinstance(data, list) else [data]
    if not items:
        raise _fail("no effect", file, where)
    return tuple(_effect(item, file, f"{where}[{n}]" if isinstance(data, list) else where, True)
                 for n, item in enumerate(items))


def _declared(key: str, data: Any, file: str, where: str, described: bool) -> Declared:
    """One entry: `group:` and/or `host:` (and `description:` for a fact); `where` names its file in a diff."""
    allowed = {"group", "host", "description"} if described else {"group", "host"}
    if not isinstance(data, dict) or not data or set(data) - allowed:
        raise _fail(f"declares {' and/or '.join(sorted(allowed - {'description'}))}"
                    + (" with a description" if described else ""), file, key)
    if "group" not in data and "host" not in data:
        raise _fail("declares neither `group:` nor `host:`", file, key)
    description = data.get("description")
    if described and (not isinstance(description, str) or not description.strip()):
        raise _fail("description: what the fact is, for people, is missing", file, key)
    return Declared(where, _effects(data["group"], file, f"{key}.group") if "group" in data else None,
                    _effect(data["host"], file, f"{key}.host", False) if "host" in data else None,
                    description if described else None)


def _mapping(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise _fail(f"cannot read the declarations: {exc}", str(path)) from None
    if not isinstance(data, dict):
        raise _fail("is not a mapping", str(path))
    return data


def _section(data: dict[str, Any], name: str, file: str) -> dict[str, Any]:
    section = data.get(name) or {}
    if not isinstance(section, dict) or not all(isinstance(k, str) for k in section):
        raise _fail("is not a mapping by name", file, name)
    return section


@lru_cache(maxsize=4)
def read_bindings(root: Path) -> Bindings:
    """Every `roles/<role>/meta/clusterforge.yml` under the checkout `root`; a key bound by two roles is an error
    naming both (a variable read by several roles is bound by the one that owns it)."""
    settings: dict[str, Declared] = {}
    handlers: dict[str, tuple[Effect, ...]] = {}
    for path in sorted((root / "roles").glob(f"*/{BINDING.as_posix()}")):
        where, file = path.relative_to(root).as_posix(), str(path)
        data = _mapping(path)
        unknown = sorted(set(data) - {"settings", "handlers"})
        if unknown:
            raise _fail(f"unknown section(s) {', '.join(map(str, unknown))} (known: settings, handlers)", file)
        for key, entry in _section(data, "settings", file).items():
            if key in settings:
                raise _fail(f"{key} is bound in {settings[key].where} as well: bind it in one role", file, key)
            settings[key] = _declared(key, entry, file, where, described=False)
        for name, entry in _section(data, "handlers", file).items():
            if name in handlers:
                raise _fail("is declared by another role as well", file, f"handlers.{name}")
            handlers[name] = _effects(entry, file, f"handlers.{name}")
    return Bindings(settings, handlers)


@lru_cache(maxsize=1)
def facts() -> dict[str, Declared]:
    """clusterforge/render/facts.yaml: the keys render writes that no role reads, with what each is."""
    source = resources.files("clusterforge.render") / FACTS
    where = f"clusterforge/render/{FACTS}"
    with resources.as_file(source) as path:
        data = _mapping(path)
        return {key: _declared(key, entry, str(path), where, described=True)
                for key, entry in _section(data, "facts", str(path)).items()}


def bindings() -> Bindings:
    """The bindings of this checkout (clusterforge.files.checkout.project_root)."""
    from clusterforge.files.checkout import project_root

    return read_bindings(project_root())
