"""A plug-in's part in a stage: a module of the plug-in's package named for the stage, found at run time.

Targets (`clusterforge/targets/<name>/`) and accelerator vendors (`clusterforge/accelerators/<vendor>/`) sit above
the layers that use them, which reach them only by name through their kernels; each stage asks for its own module
and checks what it finds against the interface it declares, so a plug-in implements only the stages it takes part
in and no stage names a plug-in."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")


def _where(package: str, module: str) -> str:
    return f"{package.replace('.', '/')}/{module}.py"


def plugin_part(package: str, module: str) -> ModuleType | None:
    """The module `module` of a plug-in's package (`package.module`), or None where the plug-in has none: it takes
    no part in that stage. A plug-in that is one module, not a package, has no parts."""
    name = f"{package}.{module}"
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None
    return None if found is None else importlib.import_module(name)


def plugin_value(package: str, module: str, name: str, kind: type[T]) -> T | None:
    """`name` in a plug-in's module for a stage, checked to be the `kind` the stage declares (a class, or a
    runtime-checkable Protocol for a function). None where the plug-in has no such module; a module without it, or
    with something else under that name, is the plug-in's mistake, said as one."""
    part = plugin_part(package, module)
    if part is None:
        return None
    found = getattr(part, name, None)
    if not isinstance(found, kind):
        raise RuntimeError(f"{_where(package, module)} must define {name}, a {kind.__name__}")
    return found


def plugin_function(package: str, module: str, name: str) -> Callable[..., Any] | None:
    """A function a plug-in gives a stage through its module of that stage, found as `plugin_value` finds a value:
    the caller types it as the callback Protocol the stage declares."""
    part = plugin_part(package, module)
    if part is None:
        return None
    found = getattr(part, name, None)
    if not callable(found):
        raise RuntimeError(f"{_where(package, module)} must define the function {name}")
    return found  # type: ignore[no-any-return]
