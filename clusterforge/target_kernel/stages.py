"""Where each stage finds its part of a target: a module of the target's package named for the stage
(`clusterforge/targets/<name>/<module>.py`), which implements the interface the stage declares. The kernel's own
stages (the blueprint's parts, the catalog's part, node power, render) are read here, each once per target; the
other stages ask `stage_value` and `stage_function` with their own interface, so the stage names no target and a
target implements only what it supports."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any, TypeVar

from clusterforge.catalog import CatalogPart
from clusterforge.core.plugin_parts import plugin_function, plugin_part, plugin_value
from clusterforge.target_kernel.protocol import BlueprintPart, NodePower, RenderPart, Target

# The package whose folders are the targets, imported by name: the kernel sits below the target packages, which it
# reaches only at run time (a test adds a folder of its own to this package's path).
PACKAGES = "clusterforge.targets"
T = TypeVar("T")


def stage_part(target: Target, module: str) -> ModuleType | None:
    """A stage's part of a target, where the target has one: the module `module` of its package
    (`clusterforge/targets/<name>/<module>.py`), which implements the interface that stage declares (render's
    `PowerSaveLaunch` is `powersave_launch.launch_data`). None where the target has no such module: it takes no part
    in that stage. Found by module, as its power-save provider is, so the stage names no target."""
    return plugin_part(f"{PACKAGES}.{target.name}", module)


def stage_value(target: Target, module: str, name: str, kind: type[T]) -> T | None:
    """What a target gives a stage through its module of that stage (`stage_part`): `name` there, checked to be
    the `kind` the stage declares, so the stage's use of it type-checks against its own interface."""
    return plugin_value(f"{PACKAGES}.{target.name}", module, name, kind)


def stage_function(target: Target, module: str, name: str) -> Callable[..., Any] | None:
    """A function a target gives a stage through its module of that stage, as `stage_value` finds a value: the
    caller types it as the callback Protocol the stage declares (`SoftwareChecks`, `CostLines`)."""
    return plugin_function(f"{PACKAGES}.{target.name}", module, name)


NO_BLUEPRINT = BlueprintPart()
NO_RENDER = RenderPart()


@cache
def blueprint_part(target: Target) -> BlueprintPart:
    """What the target brings to the blueprint (its `blueprint.py`'s BLUEPRINT); nothing where it has no such
    module."""
    return stage_value(target, "blueprint", "BLUEPRINT", BlueprintPart) or NO_BLUEPRINT


@cache
def catalog_part(target: Target) -> CatalogPart | None:
    """What the target adds to the catalog (its `catalog.py`'s CATALOG): its kind of instance type, its software and
    price tables, and the data files that fill them."""
    return stage_value(target, "catalog", "CATALOG", CatalogPart)


@cache
def node_power(target: Target) -> NodePower | None:
    """How the power-save programs start and stop the target's nodes (its `power.py`'s POWER); None: they cannot."""
    return stage_value(target, "power", "POWER", NodePower)


@cache
def render_part(target: Target) -> RenderPart:
    """What the target adds to render (its `render.py`'s RENDER); nothing where it has no such module."""
    return stage_value(target, "render", "RENDER", RenderPart) or NO_RENDER
