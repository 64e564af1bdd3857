"""The render manifest: every file a render wrote and what changing each of its files or keys takes on a running
cluster, written beside the files (`manifest.json`). `diff` and `update` read a change's effect from here only.

Why a file: a new rendered file, or a key no one classed, used to meet a fallback in the diff ("not classified:
treated as needing idle nodes") and so reach an operator as a false DRAIN of the whole cluster. Here every
file's class comes from one declaration beside what produces it, and a file or key without one is a failing test
(tests/test_render_manifest.py), never a user's surprise:

- a renderer module declares each file it writes (`DAY_TWO`, a `FileDeclaration`): the whole file's effects, the
  slurm role's handlers for it, or "by key";
- "by key" files take each key's class from where the key is declared: slurm.conf keys from slurm.conf(5)'s
  table (catalog/data/slurm-changes.yaml) and the slurm role's restart keys, inventory vars from the role that
  reads them, the facts file, an accelerator's pins or a target (clusterforge.render.change_classes);
- a target's config file from the target's own table (its `day2.py`'s `EFFECTS`).

The manifest holds the keys this render wrote (not every key that could be): O(keys), not O(hosts). A render
directory from before the manifest is read with this version's declarations (Rendered.from_directory).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.render.change_effects import ACTION_NAMES, Effect, FabricHosts, Hosts, VendorGpus

MANIFEST = "manifest.json"
KIND = "RenderManifest"


# ---------------------------------------------------------------------------------------------------------------
# What a renderer declares for each file it writes


@dataclass(frozen=True)
class WholeFile:
    """Any change of the file takes `effects` (the file is compared line by line)."""

    effects: tuple[Effect, ...]


@dataclass(frozen=True)
class RoleHandlers:
    """The file is installed by the slurm role, whose `slurm_notify` names the handlers a change of it notifies
    (and its meta/clusterforge.yml what each handler takes); a node's own lines restart that node's slurmd."""


@dataclass(frozen=True)
class ByKey:
    """Each key of the file is classed where the key is declared: `slurm.conf` by slurm.conf(5)'s table, `vars`
    (an inventory file) by the role that reads each var. `membership`: what hosts joining, leaving or moving
    between the file's groups take (hosts.yml's)."""

    kind: Literal["slurm.conf", "vars"]
    membership: Mapping[str, Effect] = field(default_factory=dict)


FileDeclaration = WholeFile | RoleHandlers | ByKey


@dataclass(frozen=True)
class VarKeys:
    """The keys an inventory file writes: cluster-wide (group_vars/all.yml, hosts.yml's `all` vars) and per host
    or pool (hosts.yml's group and host vars, a pool's group_vars file)."""

    group: frozenset[str] = frozenset()
    host: frozenset[str] = frozenset()


# ---------------------------------------------------------------------------------------------------------------
# The manifest


@dataclass(frozen=True)
class Exempt:
    """A value swap a key's row classes apart (slurm.conf(5): a plugin replaced by its compatible successor)."""

    old: str
    new: str
    effects: tuple[Effect, ...]


When = Literal["added", "removed", "smaller"]
WHEN: tuple[When, ...] = ("added", "removed", "smaller")


@dataclass(frozen=True)
class Case:
    """A direction of change a key's row classes apart: the key `added` (absent before), `removed` (absent after),
    or `smaller` (both numbers, or versions such as 2.12 and 2.15, and the new one lower): a cloud provider grows a
    file system in place but replaces it to shrink it."""

    when: When
    effects: tuple[Effect, ...]


@dataclass(frozen=True)
class Classed:
    """What changing one file or key takes, and where that is declared."""

    effects: tuple[Effect, ...]
    declared_by: str
    exempt: tuple[Exempt, ...] = ()
    cases: tuple[Case, ...] = ()

    def for_values(self, old: str | None, new: str | None) -> tuple[Effect, ...]:
        """The effects of changing `old` to `new`: an exemption's where one names the pair (plugin names compared
        as SLURM matches them: no case, the type prefix optional), else a case's where one names the direction."""
        found = next((e for e in self.exempt if _plugin(e.old) == _plugin(old) and _plugin(e.new) == _plugin(new)),
                     None)
        if found is not None:
            return found.effects
        case = next((c for c in self.cases if c.when == direction(old, new)), None)
        return case.effects if case is not None else self.effects


def _plugin(value: str | None) -> str:
    return (value or "").strip().lower().rpartition("/")[2]


def _number(value: str) -> tuple[int, ...] | float | None:
    """A value as what it counts: a number, a version's parts (`2.15` is (2, 15), above (2, 12)), else None."""
    parts = value.strip().split(".")
    if 1 < len(parts) <= 4 and all(p.isdigit() and len(p) <= 9 for p in parts):
        return tuple(int(p) for p in parts)
    try:
        number = float(value) if len(value) <= 40 else None
    except ValueError:
        return None
    return number if number is not None and number == number else None  # NaN is no number


def direction(old: str | None, new: str | None) -> When | None:
    """How a value changed: `added`, `removed`, `smaller` (both numbers or both versions, the new one lower), or
    None (any other change)."""
    if old is None:
        return "added" if new is not None else None
    if new is None:
        return "removed"
    before, after = _number(old), _number(new)
    if type(before) is type(after) and before is not None and after is not None:
        return "smaller" if after < before else None  # type: ignore[operator]
    return None


Compared = Literal["lines", "slurm", "vars", "config", "resources"]
COMPARED: tuple[Compared, ...] = ("lines", "slurm", "vars", "config", "resources")


@dataclass(frozen=True)
class FileEntry:
    """One rendered file's classes: `whole` for any change of it, `keys` for each setting it writes cluster-wide
    (a slurm.conf entry, a group var, a target's config key), `host_keys` for each var written per host or pool,
    `nodes` for its NodeName lines (`joins`: nodes entering or leaving slurm.conf; `changed`: a node's own line),
    `hosts` for hosts.yml's membership (`added`, `removed`, `groups`, `groups-controller`, `hardware`). A target's
    resources file (`compared: resources`) has a key per resource (its presence and kind) and per setting
    (`pool gpu.instance_type`)."""

    declared_by: str
    compared: Compared = "lines"  # how a diff reads the file: by line, by entry, by resource
    whole: Classed | None = None
    keys: Mapping[str, Classed] = field(default_factory=dict)
    host_keys: Mapping[str, Classed] = field(default_factory=dict)
    nodes: Mapping[str, Classed] = field(default_factory=dict)
    hosts: Mapping[str, Classed] = field(default_factory=dict)


@dataclass(frozen=True)
class Manifest:
    """Every file of one render by relative path, with its classes, and the cluster it was rendered for."""

    files: Mapping[str, FileEntry]
    cluster: str = ""

    def entry(self, path: str) -> FileEntry | None:
        return self.files.get(path)

    def to_json(self) -> str:
        return json.dumps({"apiVersion": "clusterforge/v1", "kind": KIND, "cluster": self.cluster,
                           "files": {path: _entry_json(entry) for path, entry in sorted(self.files.items())}},
                          indent=1, sort_keys=False) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# JSON, both ways: a render directory's manifest is read back as untrusted input (a PR's render directory)


def _effect_json(effect: Effect) -> dict[str, Any]:
    hosts: Any = ({"gpus_of": effect.hosts.vendor} if isinstance(effect.hosts, VendorGpus)
                  else {"fabric_of": effect.hosts.kind} if isinstance(effect.hosts, FabricHosts) else effect.hosts)
    out: dict[str, Any] = {"action": effect.action.name.lower(), "hosts": hosts, "why": effect.why}
    if effect.daemon is not None:
        out["daemon"] = effect.daemon
    return out


def _classed_json(classed: Classed) -> dict[str, Any]:
    out: dict[str, Any] = {"declared_by": classed.declared_by, "effects": [_effect_json(e) for e in classed.effects]}
    if classed.exempt:
        out["exempt"] = [{"old": e.old, "new": e.new, "effects": [_effect_json(x) for x in e.effects]}
                         for e in classed.exempt]
    if classed.cases:
        out["cases"] = [{"when": c.when, "effects": [_effect_json(x) for x in c.effects]} for c in classed.cases]
    return out


def _entry_json(entry: FileEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"declared_by": entry.declared_by, "compared": entry.compared}
    if entry.whole is not None:
        out["whole"] = _classed_json(entry.whole)
    for name in ("keys", "host_keys", "nodes", "hosts"):
        table: Mapping[str, Classed] = getattr(entry, name)
        if table:
            out[name] = {key: _classed_json(classed) for key, classed in table.items()}
    return out


_SELECTORS = frozenset({"none", "all", "controllers", "compute", "dbd", "gpu", "changed"})
_DAEMONS = frozenset({"slurmctld", "slurmd", "slurmdbd"})
MAX_TEXT = 2000  # characters of a `why` or `declared_by`: the shipped ones are a sentence or two


def _text(value: Any, where: str, file: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ClusterforgeError(Problem(f"not a text of at most {MAX_TEXT} characters", file, path=where))
    return value


def _effect(raw: Any, where: str, file: str) -> Effect:
    if not isinstance(raw, dict) or raw.keys() - {"action", "hosts", "why", "daemon"}:
        raise ClusterforgeError(Problem("not an effect {action, hosts, why[, daemon]}", file, path=where))
    action = ACTION_NAMES.get(str(raw.get("action")))
    hosts = raw.get("hosts")
    selector: Hosts
    if isinstance(hosts, dict) and set(hosts) == {"gpus_of"} and isinstance(hosts["gpus_of"], str):
        selector = VendorGpus(hosts["gpus_of"][:40])
    elif isinstance(hosts, dict) and set(hosts) == {"fabric_of"} and isinstance(hosts["fabric_of"], str):
        selector = FabricHosts(hosts["fabric_of"][:40])
    elif isinstance(hosts, str) and hosts in _SELECTORS:
        selector = hosts  # type: ignore[assignment]
    else:
        raise ClusterforgeError(Problem(f"unknown hosts {str(hosts)[:40]!r}", file, path=f"{where}.hosts"))
    daemon = raw.get("daemon")
    if action is None or (daemon is not None and daemon not in _DAEMONS):
        raise ClusterforgeError(Problem("unknown action or daemon", file, path=where))
    return Effect(action, selector, _text(raw.get("why"), f"{where}.why", file), daemon)


def _effects(raw: Any, where: str, file: str) -> tuple[Effect, ...]:
    if not isinstance(raw, list) or not raw:
        raise ClusterforgeError(Problem("expected a list of effects", file, path=where))
    return tuple(_effect(item, f"{where}[{i}]", file) for i, item in enumerate(raw))


def _classed(raw: Any, where: str, file: str) -> Classed:
    if not isinstance(raw, dict) or raw.keys() - {"declared_by", "effects", "exempt", "cases"}:
        raise ClusterforgeError(Problem("not a class {declared_by, effects[, exempt][, cases]}", file, path=where))
    exempt, cases = raw.get("exempt", []), raw.get("cases", [])
    for name, value in (("exempt", exempt), ("cases", cases)):
        if not isinstance(value, list):
            raise ClusterforgeError(Problem("expected a list", file, path=f"{where}.{name}"))
    return Classed(_effects(raw.get("effects"), f"{where}.effects", file),
                   _text(raw.get("declared_by"), f"{where}.declared_by", file),
                   tuple(Exempt(_text(e.get("old") if isinstance(e, dict) else None, f"{where}.exempt", file),
                                _text(e.get("new") if isinstance(e, dict) else None, f"{where}.exempt", file),
                                _effects(e.get("effects") if isinstance(e, dict) else None, f"{where}.exempt", file))
                         for e in exempt),
                   tuple(_case(c, f"{where}.cases[{i}]", file) for i, c in enumerate(cases)))


def _case(raw: Any, where: str, file: str) -> Case:
    if not isinstance(raw, dict) or raw.keys() != {"when", "effects"} or raw["when"] not in WHEN:
        raise ClusterforgeError(Problem(f"not a case {{when: {' | '.join(WHEN)}, effects}}", file, path=where))
    return Case(raw["when"], _effects(raw["effects"], f"{where}.effects", file))


def _table(raw: Any, where: str, file: str) -> dict[str, Classed]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ClusterforgeError(Problem("expected a mapping", file, path=where))
    return {str(key): _classed(value, f"{where}.{key}", file) for key, value in raw.items()}


def from_json(text: str, file: str = MANIFEST) -> Manifest:
    """A manifest read back (a render directory's): its shape checked, since the directory may come from a pull
    request; its size is bounded by the render directory's own file limits (clusterforge.day2.rendered)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ClusterforgeError(Problem(f"is not JSON: {str(exc)[:80]}", file)) from None
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("files"), dict):
        raise ClusterforgeError(Problem(f"is not a {KIND} (kind, files)", file))
    files: dict[str, FileEntry] = {}
    for path, raw in data["files"].items():
        where = f"files.{path}"
        if not isinstance(raw, dict):
            raise ClusterforgeError(Problem("expected a mapping", file, path=where))
        whole = raw.get("whole")
        compared = raw.get("compared")
        if compared not in COMPARED:
            raise ClusterforgeError(Problem(f"compared is one of {', '.join(COMPARED)}", file,
                                            path=f"{where}.compared"))
        files[str(path)] = FileEntry(
            _text(raw.get("declared_by"), f"{where}.declared_by", file), compared,
            _classed(whole, f"{where}.whole", file) if whole is not None else None,
            _table(raw.get("keys"), f"{where}.keys", file), _table(raw.get("host_keys"), f"{where}.host_keys", file),
            _table(raw.get("nodes"), f"{where}.nodes", file), _table(raw.get("hosts"), f"{where}.hosts", file))
    cluster = data.get("cluster", "")
    return Manifest(files, cluster if isinstance(cluster, str) else "")


def classed(effects: Iterable[Effect], declared_by: str) -> Classed:
    return Classed(tuple(effects), declared_by)
