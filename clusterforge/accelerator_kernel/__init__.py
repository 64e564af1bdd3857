"""The accelerator vendors' registry: each vendor is a module or package of `clusterforge/accelerators/`
exporting an `ACCELERATOR` (accelerator.py), found at run time on that package's path, on first use.

The catalog's `gpus.vendor` names one of them. The software rules (its stack and pins), gres.conf (its device files),
the group vars (its role variables) and day two (which hosts its driver changes reboot) ask the registry, so nothing
else spells a vendor and a new one is a new module there (docs/contributing.md). A vendor that is a package may take
part in later stages with modules of its own (`vendor_value`, `vendor_function`: its catalog tables, its software
checks, its lab stand-ins), as a target does; the kernel sits below them and reaches them only by name.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any, TypeVar

from clusterforge.accelerator_kernel.accelerator import Accelerator, Devices, PinVar
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.plugin_parts import plugin_function, plugin_value

__all__ = ["Accelerator", "Devices", "PinVar", "accelerator", "default", "instance_default", "known", "registered",
           "running", "stack_pins", "stacks", "vendor_function", "vendor_value"]

# The package whose modules are the vendors, imported by name at run time (a test adds a folder to its path).
PACKAGE = "clusterforge.accelerators"
_VENDORS: dict[str, Accelerator] = {}
_MODULES: dict[str, str] = {}  # vendor name -> its module's name under PACKAGE
T = TypeVar("T")


def registered() -> dict[str, Accelerator]:
    """Every vendor declared in this package, by name: the default first, then in module order (found once)."""
    if not _VENDORS:
        found: dict[str, Accelerator] = {}
        package = importlib.import_module(PACKAGE)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            declared = getattr(importlib.import_module(f"{PACKAGE}.{info.name}"), "ACCELERATOR", None)
            if declared is None:
                continue
            if not isinstance(declared, Accelerator) or declared.name in found:
                raise RuntimeError(f"clusterforge/accelerators/{info.name}: ACCELERATOR must be one Accelerator "
                                   "with a name of its own")
            found[declared.name] = declared
            _MODULES[declared.name] = info.name
        if sum(a.default for a in found.values()) != 1 or sum(a.instance_default for a in found.values()) > 1:
            raise RuntimeError("clusterforge/accelerators: exactly one vendor is the default, at most one the "
                               "instance default")
        _VENDORS.update(sorted(found.items(), key=lambda item: not item[1].default))
    return _VENDORS


def known() -> str:
    """The registered names as a message lists them: `'nvidia', 'amd' or 'aws'`."""
    names = [repr(name) for name in registered()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def default() -> Accelerator:
    """The vendor the roles assume where no `gpu_vendor` is rendered."""
    return next(a for a in registered().values() if a.default)


def accelerator(vendor: str | None) -> Accelerator:
    """The vendor a catalog entry or a plan names (None: the default); the catalog checked it is registered."""
    if vendor is None:
        return default()
    found = registered().get(vendor)
    if found is None:
        raise ClusterforgeError(Problem(f"unknown accelerator vendor {vendor!r}", hint=f"use one of {known()}"))
    return found


def instance_default() -> Accelerator | None:
    """The vendor of an instance type's `accelerators:` that name none, if a vendor claims them."""
    return next((a for a in registered().values() if a.instance_default), None)


def running(stack: str) -> Accelerator:
    """The vendor whose devices run `stack` (`software.stack`'s value)."""
    found = next((a for a in registered().values() if a.stack == stack), None)
    if found is None:
        stacks = ", ".join(sorted({a.stack for a in registered().values()}))
        raise ClusterforgeError(Problem(f"unknown software stack {stack!r}", hint=f"use one of {stacks}"))
    return found


def stacks() -> tuple[str, ...]:
    """Every registered vendor's stack (`software.stack`'s values), the default vendor's first."""
    return tuple(dict.fromkeys(a.stack for a in registered().values()))


def stack_pins(stack: str) -> tuple[str, ...]:
    """The `software:` fields a pool on `stack` must pin."""
    return running(stack).pins


def vendor_value(vendor: Accelerator, module: str, name: str, kind: type[T]) -> T | None:
    """What a vendor gives a stage through its module of that stage (`clusterforge/accelerators/<vendor>/<module>.py`):
    `name` there, checked to be the `kind` the stage declares; None where the vendor takes no part in it."""
    registered()
    return plugin_value(f"{PACKAGE}.{_MODULES[vendor.name]}", module, name, kind)


def vendor_function(vendor: Accelerator, module: str, name: str) -> Callable[..., Any] | None:
    """A function a vendor gives a stage through its module of that stage, as `vendor_value` finds a value: the
    caller types it as the callback Protocol the stage declares."""
    registered()
    return plugin_function(f"{PACKAGE}.{_MODULES[vendor.name]}", module, name)
