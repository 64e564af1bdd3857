"""Find every rule: each module of the shared domain package and of each target's `rules` package.

Adding a rule is adding a declaration to a module in one of those packages (docs/contributing.md); nothing
lists the modules. Modules are imported by name at run time, so the rules sit above the engine without the
engine importing them.
"""

from __future__ import annotations

import importlib
import pkgutil

from clusterforge.policies.registry import Rule, ordered
from clusterforge.target_kernel import rule_packages as target_rule_packages

SHARED_RULES = "clusterforge.policies.domains"
_found: list[str] = []


def rule_packages() -> list[str]:
    """The shared domains, then the `rules` package of every target that has one."""
    return [SHARED_RULES, *target_rule_packages()]


def load_rules() -> list[Rule]:
    """Import every rule module once (registering its rules) and return the rules in reference order."""
    if not _found:
        for name in rule_packages():
            package = importlib.import_module(name)
            _found.extend(info.name for info in pkgutil.iter_modules(package.__path__, f"{name}."))
        for module in _found:
            importlib.import_module(module)
    return ordered()
