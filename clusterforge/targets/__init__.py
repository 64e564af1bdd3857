"""Targets: where a cluster runs. Each is a package here (`aws`, `onprem`) exporting a `TARGET`.

Everything that differs by target sits in its package behind the `Target` declaration: the blueprint section
it owns and what it requires, the hardware kind its pools use, whether a facility (`site:`) is checked, the
controller it adds, the facts its pools' nodes carry, its group vars, the files render adds and the project
they refer from, how it reads what its deployment reports, its keys' day-two effects, its own rules. Nothing
outside this package compares a target's name or imports a target package: callers ask `target_of(cluster)`.
Packages are found at run time, so a new target is a new folder (docs/contributing.md).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from pathlib import Path

from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.targets.protocol import NodeFacts, Outputs, OutputsReader, Target

__all__ = ["NodeFacts", "Outputs", "OutputsReader", "Target", "outputs_reader", "project_dir", "registered",
           "rule_packages", "target_of"]

_TARGETS: dict[str, Target] = {}


def registered() -> dict[str, Target]:
    """Every target package under clusterforge/targets, by name (found once, on first use)."""
    if not _TARGETS:
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
            if info.ispkg:
                target = importlib.import_module(f"{__name__}.{info.name}").TARGET
                if not isinstance(target, Target) or target.name != info.name:
                    raise RuntimeError(f"clusterforge/targets/{info.name} must export TARGET named {info.name!r}")
                _TARGETS[target.name] = target
    return _TARGETS


def target_of(cluster: object) -> Target:
    """The target a (validated) blueprint names; the model checked it is registered."""
    name = getattr(cluster, "target", "")
    target = registered().get(name)
    if target is None:
        raise ClusterforgeError(Problem(f"unknown target {name!r}", hint=f"use one of {', '.join(registered())}"))
    return target


def rule_packages() -> list[str]:
    """The `rules` package of each target that has its own rules."""
    names = [f"{__name__}.{name}.rules" for name in registered()]
    return [name for name in names if importlib.util.find_spec(name) is not None]


def project_dir(cluster: object) -> Path:
    """Where the cluster's target keeps its deployment project, under the working directory (the files render adds
    refer to the blueprint from there); the working directory itself for a target without one."""
    own = target_of(cluster).project_dir
    return Path.cwd() / own if own is not None else Path.cwd()


def outputs_reader() -> OutputsReader:
    """The reader of deployment outputs (`--from-stack`): the first target, by name, whose deployment reports them.
    The outputs are read before the blueprint, so they are read by the target that makes them, not the one the
    blueprint names."""
    reader = next((target.outputs for target in registered().values() if target.outputs is not None), None)
    if reader is None:
        raise ClusterforgeError(Problem("no target reads deployment outputs"))
    return reader
