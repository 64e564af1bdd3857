"""The targets kernel: where a cluster runs. Each target is a package of clusterforge/targets (`aws`, `onprem`,
`lab`) exporting a `TARGET`, which this registry finds there at run time (`PACKAGES`).

Everything that differs by target sits in its package: `TARGET` (a `Target`) says who it is (its name, its title,
the hardware kind its pools use, whether a facility is checked), and each stage finds what the target does for it in
a module named for the stage (`stages`): the blueprint section, pool fields, fabric kinds and managed Lustre it owns
and what it requires (`blueprint.py`), its catalog part (`catalog.py`), how its nodes are powered (`power.py`), the
files, facts and group vars render adds and how it reads what its deployment reports (`render.py`), its keys'
day-two effects (`day2.py`), its cost lines (`cost.py`), its own rules (`rules/`). A pool may name a target of its own
(a cloud pool of an on-prem cluster): `pool_target(cluster, pool)`. Nothing outside the target packages compares a
target's name or imports a target package: callers ask `target_of(cluster)`. Packages are found at run time, so a
new target is a new folder (docs/contributing.md). The catalog is composed here too: the shared one with each
target's part (`load_catalog`), as the blueprint model is with their sections.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import get_args

from clusterforge.accelerator_kernel import registered as accelerators
from clusterforge.accelerator_kernel import vendor_value
from clusterforge.catalog import Catalog, CatalogPart, compose_catalog
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.model import Cluster, Pool
from clusterforge.target_kernel.model import compose, pool_of
from clusterforge.target_kernel.protocol import (
    BlueprintPart,
    NodeFacts,
    NodePower,
    Outputs,
    OutputsReader,
    RenderInput,
    RenderPart,
    Target,
)
from clusterforge.target_kernel.stages import (
    PACKAGES,
    blueprint_part,
    catalog_part,
    node_power,
    render_part,
    stage_function,
    stage_part,
    stage_value,
)

__all__ = ["PACKAGES", "BlueprintPart", "NodeFacts", "NodePower", "Outputs", "OutputsReader", "RenderInput",
           "RenderPart", "Target", "blueprint_model", "blueprint_part", "can_power", "catalog_part", "catalog_parts",
           "in_use", "load_catalog", "node_power", "outputs_reader", "pool_model", "pool_target", "project_dir",
           "registered", "render_part", "rule_packages", "slurm_launched", "slurm_launches_nodes", "software_fields",
           "stage_function", "stage_part", "stage_value", "target_of"]

_TARGETS: dict[str, Target] = {}


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
    """Every registered accelerator vendor's part of the catalog (its stack's software tables), then every
    registered target's, each in its registry's order."""
    vendors = (vendor_value(vendor, "catalog", "CATALOG", CatalogPart) for vendor in accelerators().values())
    targets = (catalog_part(target) for target in registered().values())
    return tuple(part for part in (*vendors, *targets) if part is not None)


def load_catalog(extra: Sequence[Path] = ()) -> Catalog:
    """The built-in catalog with every registered target's part, plus the user files in `extra` (`--catalog`)."""
    return compose_catalog(catalog_parts(), extra)


def software_fields() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields of the composed blueprint's `software:` and of a pool's `software:` override: every stack's pins
    and every registered target's own."""
    software = type(blueprint_model().model_fields["software"].default)
    override = next(a for a in get_args(pool_model().model_fields["software"].annotation) if a is not type(None))
    return tuple(software.model_fields), tuple(override.model_fields)


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
    launches it that way (`NodePower.launches_pool`: every AWS compute pool). Its nodes are `State=CLOUD`, its
    static ones in SuspendExcNodes, and no deployment or inventory lists them: they join by themselves."""
    power = node_power(pool_target(cluster, pool))
    return pool.power_saved or (power is not None and power.launches_pool(cluster, pool))


def can_power(cluster: Cluster, pool: Pool) -> bool:
    """clusterforge's power-save programs can start and stop this pool's nodes: its target has a provider
    (`NodePower`) and the provider can power this pool."""
    power = node_power(pool_target(cluster, pool))
    return power is not None and power.powers_pool(cluster, pool)


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
    own = render_part(target_of(cluster)).project_dir
    return Path.cwd() / own if own is not None else Path.cwd()


def outputs_reader(among: list[Target] | None = None, name: str | None = None) -> OutputsReader:
    """The reader of deployment outputs (`--from-outputs`): the named target's, else the one target (of `among`,
    default every registered one) whose deployment reports outputs; several are an error that says how to choose."""
    candidates = [target for target in (among if among is not None else registered().values())
                  if render_part(target).outputs is not None and name in (None, target.name)]
    reader = render_part(candidates[0]).outputs if len(candidates) == 1 else None
    if reader is None:
        readers = ", ".join(t.name for t in registered().values() if render_part(t).outputs is not None) or "none"
        what = f"target {name} reads no deployment outputs" if name else (
            "no target of this cluster reads deployment outputs" if not candidates
            else f"several targets read deployment outputs ({', '.join(t.name for t in candidates)})")
        raise ClusterforgeError(Problem(what, hint=f"targets that read them: {readers}; name one with --target"))
    return reader
