"""Cross-field shape checks of the `slurm:` section: pass-through settings that would take over what clusterforge
writes, and names that must exist.

`slurm.settings` is merged over the rendered slurm.conf. A key that writes a structural line (NodeName,
PartitionName, ...), names the controllers or makes SLURM read a file clusterforge does not render would break the
rendered configuration, and a key a blueprint field already sets would make the file and the roles disagree
(the roles read the field, slurmctld the setting). Both are refused here, at load, so no command, not even
`render --force`, writes them. Whether a key exists in the pinned release is a policy (SLM-007).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel

from clusterforge.core.errors import Problem, shown
from clusterforge.core.hints import did_you_mean
from clusterforge.files.yamlsource import PathKey, Source
from clusterforge.model.base import SetsSlurm
from clusterforge.model.blueprint import Cluster

_LINES = "clusterforge writes these lines from the pools and partitions"
_HOSTS = "the controllers are the nodes of the controller pool (two nodes: HA)"
_FILES = "it would make SLURM read a file clusterforge does not render"
STRUCTURAL: dict[str, str] = {
    **dict.fromkeys(("NodeName", "PartitionName", "NodeSet", "DownNodes", "FrontendName", "FrontendAddr"), _LINES),
    **dict.fromkeys(("SlurmctldHost", "ControlMachine", "ControlAddr", "BackupController", "BackupAddr"), _HOSTS),
    **dict.fromkeys(("Include", "PlugStackConfig"), _FILES),
}
"""slurm.conf keys no blueprint may set, with why."""



def _owned(model: type[BaseModel], prefix: str, found: dict[str, str]) -> None:
    """The `SetsSlurm` declarations of `model`'s fields and its nested models' (a list's items as `name[]`)."""
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        for mark in info.metadata:
            if isinstance(mark, SetsSlurm):
                for key in mark.keys:
                    found[key] = f"{path} ({mark.note})" if mark.note else path
        for inner, suffix in _models(info.annotation):
            _owned(inner, f"{path}{suffix}.", found)


def _models(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    """The blueprint models an annotation holds: itself, a union's members, a list's items (suffix `[]`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "")]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _models(args[0])
    if origin in (list, tuple):
        return [(model, "[]") for arg in args for model, _ in _models(arg)]
    return [found for arg in args for found in _models(arg)]


@cache
def owned() -> dict[str, str]:
    """slurm.conf keys a blueprint field sets, with the field: derived from the fields' `SetsSlurm` declarations
    (model/base.py) over the blueprint model (a target's section would declare its own the same way)."""
    found: dict[str, str] = {}
    _owned(Cluster, "", found)
    return found

_STRUCTURAL = {key.lower(): key for key in STRUCTURAL}


def _settings_problems(settings: Mapping[str, object], field: str, source: Source, conf: bool) -> Iterator[Problem]:
    """Keys given twice in different case (SLURM reads keys case-insensitively), and for slurm.conf the keys
    clusterforge writes itself."""
    seen: dict[str, str] = {}
    for key in settings:
        path: PathKey = ("slurm", field, key)
        folded = key.lower()
        if folded in seen:
            yield source.problem(path, f"{shown(key)} is {shown(seen[folded])} again (SLURM keys ignore case)",
                                 "keep one of them")
            continue
        seen[folded] = key
        if not conf:
            continue
        if folded in _STRUCTURAL:
            name = _STRUCTURAL[folded]
            yield source.problem(path, f"{name} cannot be set in slurm.{field}: {STRUCTURAL[name]}",
                                 "remove it; describe the cluster with pools, partitions and the fabric")
        elif folded in (owners := {key.lower(): key for key in owned()}):
            name = owners[folded]
            setter = owned()[name]
            yield source.problem(path, f"{name} is set by {setter}, not slurm.{field}",
                                 f"use {setter.split(' (', 1)[0]}")


def slurm_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    """What in `slurm:` and `storage.shared` does not fit the rest of the blueprint."""
    slurm = cluster.slurm
    yield from _settings_problems(slurm.settings, "settings", source, conf=True)
    yield from _settings_problems(slurm.cgroup_settings, "cgroup_settings", source, conf=False)
    pool = slurm.accounting.pool
    names = [p.name for p in cluster.pools]
    if pool is not None and pool not in names:
        yield source.problem(("slurm", "accounting", "pool"), f"unknown pool {shown(pool)}", did_you_mean(pool, names))
    monitoring = cluster.operations.monitoring.pool
    if monitoring is not None and monitoring not in names:
        yield source.problem(("operations", "monitoring", "pool"), f"unknown pool {shown(monitoring)}",
                             did_you_mean(monitoring, names))
    recovery = slurm.recovery
    for code in sorted(set(recovery.requeue_exit) & set(recovery.requeue_exit_hold)):
        yield source.problem(("slurm", "recovery", "requeue_exit_hold"), f"exit code {code} is in both "
                             "requeue_exit and requeue_exit_hold", "a code either requeues or holds: keep it in one")
    shared, lustre = cluster.storage.shared, cluster.storage.lustre
    if shared is not None and lustre is not None and shared.mount == lustre.mount:
        yield source.problem(("storage", "shared", "mount"), f"storage.shared and storage.lustre are both mounted "
                             f"at {shared.mount}", "give each file system its own mount point")
