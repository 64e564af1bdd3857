"""The render manifest built from a render's files: each file's declaration looked up where its producer made it,
each key classed where the key is declared (clusterforge.render.manifest says why).

The keys of the inventory files come from the caller (`VarKeys`), who has them as data already: `render` from
the vars it dumped, a render directory from the inventory it parsed; parsing a 12,500-host hosts.yml again for
its key names would cost seconds for nothing.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from types import ModuleType

from clusterforge.render.change_classes import (
    NAMED_LINES,
    NODE_FILE_CHANGED,
    NODE_JOINS,
    TargetEffects,
    node_changed,
    slurm_role,
    target_effects,
    var_class,
)
from clusterforge.render.conf_parse import conf_entries
from clusterforge.render.manifest import (
    MANIFEST,
    ByKey,
    Classed,
    Exempt,
    FileDeclaration,
    FileEntry,
    Manifest,
    RoleHandlers,
    VarKeys,
    WholeFile,
)

SLURM_TABLE = "catalog/data/slurm-changes.yaml (slurm.conf(5), SLURM 24.11) and roles/slurm slurm_restart_keys"
SLURM_ROLE = "roles/slurm: slurm_notify (vars/main.yml) and its handlers (meta/clusterforge.yml)"


def declaration_for(path: str, modules: Sequence[ModuleType]) -> tuple[FileDeclaration | TargetEffects, str] | None:
    """The declaration of a rendered file and where it is: its renderer's `DAY_TWO` entry (a glob of paths; the
    renderers are `modules`, clusterforge.render.OUTPUTS), else the target whose config folder holds it; None for
    a file nothing declares."""
    for module in modules:
        for pattern, declared in getattr(module, "DAY_TWO", {}).items():
            if fnmatch.fnmatchcase(path, pattern):
                return declared, module.__name__.replace(".", "/") + ".py"
    for table in target_effects():
        if table.resources_file is not None and path == table.resources_file:
            return table, f"target resources ({table.resources_file}: the target's day2.py EFFECTS)"
        if table.config_dir is not None and path.startswith(table.config_dir) and table.config is not None:
            return table, f"target config ({table.config_dir}: the target's day2.py EFFECTS)"
    return None


def _var(key: str, per_host: bool) -> Classed | None:
    found = var_class(key, per_host)
    return Classed(*found) if found is not None else None


def _slurm_conf(text: str, declared_by: str) -> FileEntry:
    from clusterforge.catalog.slurm_changes import changes

    role = slurm_role()
    keys: dict[str, Classed] = {}
    for key in conf_entries(text, NAMED_LINES).entries:
        row = changes().row(key.split("#", 1)[0].split("=", 1)[0])
        exempt = tuple(Exempt(e.old or "", e.new or "", role.conf_effects("slurm.conf", key, e.old, e.new))
                       for e in row.exceptions)
        keys[key] = Classed(role.conf_effects("slurm.conf", key), SLURM_TABLE, exempt)
    return FileEntry(declared_by, "slurm", keys=keys, nodes={"joins": Classed((NODE_JOINS,), declared_by),
                                                    "changed": Classed((node_changed(),), SLURM_TABLE)})


def _role_file(path: str, declared_by: str) -> FileEntry | None:
    name = path.removeprefix("slurm/")
    if name not in slurm_role().notify:
        return None
    return FileEntry(declared_by, "slurm", whole=Classed(slurm_role().file_effects(name), SLURM_ROLE),
                     nodes={"changed": Classed((NODE_FILE_CHANGED,), declared_by)})


def _vars(keys: VarKeys, declared: ByKey, declared_by: str) -> FileEntry:
    group = {key: found for key in sorted(keys.group) if (found := _var(key, per_host=False)) is not None}
    host = {key: found for key in sorted(keys.host) if (found := _var(key, per_host=True)) is not None}
    membership = {name: Classed((effect,), declared_by) for name, effect in declared.membership.items()}
    return FileEntry(declared_by, "vars", keys=group, host_keys=host, hosts=membership)


def _target(path: str, table: TargetEffects, text: str, declared_by: str) -> FileEntry:
    if path == table.resources_file and table.resource_classes is not None:
        return FileEntry(declared_by, "resources", keys=dict(table.resource_classes(text)))
    assert table.config is not None and table.config_entries is not None
    keys: dict[str, Classed] = {}
    for key in table.config_entries(text):
        effect = table.config(key)
        if effect is not None:
            keys[key] = Classed((effect,), declared_by)
    return FileEntry(declared_by, "config", keys=keys)


def entry_for(path: str, text: str, modules: Sequence[ModuleType], keys: VarKeys | None = None) -> FileEntry | None:
    """One file's entry, None when nothing declares it."""
    found = declaration_for(path, modules)
    if found is None:
        return None
    declared, declared_by = found
    if isinstance(declared, WholeFile):
        return FileEntry(declared_by, whole=Classed(declared.effects, declared_by))
    if isinstance(declared, RoleHandlers):
        return _role_file(path, declared_by)
    if isinstance(declared, ByKey):
        if declared.kind == "slurm.conf":
            return _slurm_conf(text, declared_by)
        return _vars(keys or VarKeys(), declared, declared_by)
    return _target(path, declared, text, declared_by)


def build(files: Mapping[str, str], var_keys: Mapping[str, VarKeys], modules: Sequence[ModuleType],
          cluster: str = "") -> Manifest:
    """The manifest of a render's `files` (the manifest itself left out), with each inventory file's keys, from
    the declarations of the renderer `modules` and the targets."""
    entries: dict[str, FileEntry] = {}
    for path, text in files.items():
        if path == MANIFEST:
            continue
        entry = entry_for(path, text, modules, var_keys.get(path))
        if entry is not None:
            entries[path] = entry
    return Manifest(entries, cluster)
