"""The targets kernel: where a cluster runs. Each target is a package of clusterforge/targets (`aws`, `onprem`,
`lab`) exporting a `TARGET`, which this registry finds there at run time (`PACKAGES`).

Everything that differs by target sits in its package behind the `Target` declaration: the blueprint section
and pool fields it owns (composed into the blueprint model by `model.blueprint_model`) and what it requires, the
hardware kind its pools use, whether a facility (`site:`) is checked, the controller it adds, the facts its pools'
nodes carry, its group vars, the files render adds and the project they refer from, how it reads what its
deployment reports, its keys' day-two effects, its own rules. A pool may name a target of its own (a cloud pool
of an on-prem cluster): `pool_target(cluster, pool)`. Nothing outside the target packages compares a target's name
or imports a target package: callers ask `target_of(cluster)`. Packages are found at run time, so a new target is a
new folder (docs/contributing.md). The catalog is composed here too: the shared one with each target's part
(`load_catalog`), as the blueprint model is with their sections.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from clusterforge.catalog import Catalog, CatalogPart, compose_catalog
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.model import Cluster, Pool
from clusterforge.target_kernel.model import compose, pool_of
from clusterforge.target_kernel.protocol import NodeFacts, Outputs, OutputsReader, RenderInput, Target

__all__ = ["NodeFacts", "Outputs", "OutputsReader", "RenderInput", "Target", "blueprint_model", "catalog_parts",
           "in_use", "load_catalog", "outputs_reader", "pool_model", "pool_target", "project_dir", "registered",
           "rule_packages", "slurm_launched", "slurm_launches_nodes", "stage_function", "stage_part", "stage_value",
           "target_of"]

# The package whose folders are the targets, imported by name: the kernel sits below the target packages, which it
# reaches only at run time (a test adds a folder of its own to this package's path).
PACKAGES = "clusterforge.targets"
T = TypeVar("T")

_TARGETS: dict[str, Target] = {}


def stage_part(target: Target, module: str) -> ModuleType | None:
    """A stage's part of a target, where the target has one: the module `module` of its package
    (`clusterforge/targets/<name>/<module>.py`), which implements the interface that stage declares (render's
    `PowerSaveLaunch` is `powersave_launch.launch_data`). None where the target has no such module: it takes no part
    in that stage. Found by module, as its power-save provider is, so the stage names no target."""
    name = f"{PACKAGES}.{target.name}.{module}"
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None
    return None if found is None else importlib.import_module(name)


def stage_value(target: Target, module: str, name: str, kind: type[T]) -> T | None:
    """What a target gives a stage through its module of that stage (`stage_part`): `name` there, checked to be
    the `kind` the stage declares (a class, or a runtime-checkable Protocol for a function), so the stage's use
    of it type-checks against its own interface. None where the target has no such module; a module without it,
    or with something else under that name, is the target's mistake, said as one."""
    part = stage_part(target, module)
    if part is None:
        return None
    found = getattr(part, name, None)
    if not isinstance(found, kind):
        raise RuntimeError(f"clusterforge/targets/{target.name}/{module}.py must define {name}, a {kind.__name__}")
    return found


def stage_function(target: Target, module: str, name: str) -> Callable[..., Any] | None:
    """A function a target gives a stage through its module of that stage, as `stage_value` finds a value: the
    caller types it as the callback Protocol the stage declares (`SoftwareChecks`, `CostLines`)."""
    part = stage_part(target, module)
    if part is None:
        return None
    found = getattr(part, name, None)
    if not callable(found):
        raise RuntimeError(f"clusterforge/targets/{target.name}/{module}.py must define the function {name}")
    return found  # type: ignore[no-any-return]


def registered() -> dict[str, Target]:
    """Every target package under clusterforge/targets, by name (found once, on first use)."""
    if not _TARGETS:
        path = importlib.import_module(PACKAGES).__path__
        for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
            if info.ispkg:
                target = importlib.import_module(f"{PACKAGES}.{info.name}").TARGET
                if not isinstance(target, Target) or target.name != info.name:
                    raise RuntimeError(f"clusterforge/targets/{info.name} must export TARGET named {info.name!r}")
                _TARGETS[target.name] = target
    return _TARGETS


@lru_cache(maxsize=1)
def blueprint_model() -> type[Cluster]:
    """The blueprint model with every registered target's section and pool fields (composed once)."""
    return compose(registered())


def catalog_parts() -> tuple[CatalogPart, ...]:
    """Every registered target's part of the catalog, in the registry's order."""
    return tuple(target.catalog for target in registered().values() if target.catalog is not None)


def load_catalog(extra: Sequence[Path] = ()) -> Catalog:
    """The built-in catalog with every registered target's part, plus the user files in `extra` (`--catalog`)."""
    return compose_catalog(catalog_parts(), extra)


def pool_model() -> type[Pool]:
    """The pool model of `blueprint_model()`: what a target builds a pool it adds with."""
    return pool_of(blueprint_model())


def target_of(cluster: object) -> Target:
    """The target a (validated) blueprint names; the model checked it is registered."""
    name = getattr(cluster, "target", "")
    target = registered().get(name)
    if target is None:
        raise ClusterforgeError(Problem(f"unknown target {name!r}", hint=f"use one of {', '.join(registered())}"))
    return target


def pool_target(cluster: object, pool: object) -> Target:
    """The target that owns a pool's nodes: the pool's own `target:` (a cloud pool of an on-prem cluster), else the
    cluster's."""
    name = str(getattr(pool, "target", None) or getattr(cluster, "target", ""))
    target = registered().get(name)
    if target is None:
        raise ClusterforgeError(Problem(f"unknown target {name!r}", hint=f"use one of {', '.join(registered())}"))
    return target


def slurm_launched(cluster: Cluster, pool: Pool) -> bool:
    """slurmctld's power-save programs own this pool's instances: it is power-saved (`max_count`), or its target
    launches it that way (`Target.launches_pool`: every AWS compute pool). Its nodes are `State=CLOUD`, its static
    ones in SuspendExcNodes, and no deployment or inventory lists them: they join by themselves."""
    return pool.power_saved or pool_target(cluster, pool).launches_pool(cluster, pool)


def slurm_launches_nodes(cluster: Cluster) -> bool:
    """Some pool is `slurm_launched`: slurm.conf gets the power-save programs. Without one, the rendered files are
    those of a cluster that is always on, byte for byte."""
    return any(slurm_launched(cluster, p) for p in cluster.pools)


def in_use(cluster: object) -> list[Target]:
    """The cluster's target, then each other target a pool names, once each."""
    found = {target_of(cluster).name: target_of(cluster)}
    for pool in getattr(cluster, "pools", ()):
        target = pool_target(cluster, pool)
        found.setdefault(target.name, target)
    return list(found.values())


def rule_packages() -> list[str]:
    """The `rules` package of each target that has its own rules."""
    names = [f"{PACKAGES}.{name}.rules" for name in registered()]
    return [name for name in names if importlib.util.find_spec(name) is not None]


def project_dir(cluster: object) -> Path:
    """Where the cluster's target keeps its deployment project, under the working directory (the files render adds
    refer to the blueprint from there); the working directory itself for a target without one."""
    own = target_of(cluster).project_dir
    return Path.cwd() / own if own is not None else Path.cwd()


def outputs_reader(among: list[Target] | None = None, name: str | None = None) -> OutputsReader:
    """The reader of deployment outputs (`--from-outputs`): the named target's, else the one target (of `among`,
    default every registered one) whose deployment reports outputs; several are an error that says how to choose."""
    candidates = [target for target in (among if among is not None else registered().values())
                  if target.outputs is not None and name in (None, target.name)]
    if len(candidates) != 1 or candidates[0].outputs is None:
        readers = ", ".join(t.name for t in registered().values() if t.outputs is not None) or "none"
        what = f"target {name} reads no deployment outputs" if name else (
            "no target of this cluster reads deployment outputs" if not candidates
            else f"several targets read deployment outputs ({', '.join(t.name for t in candidates)})")
        raise ClusterforgeError(Problem(what, hint=f"targets that read them: {readers}; name one with --target"))
    return candidates[0].outputs
