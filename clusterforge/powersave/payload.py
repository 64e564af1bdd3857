"""What a controller gets of clusterforge to run the power-save programs, derived from their imports.

The programs (`programs.py`), each target's provider (`targets/<name>/powersave.py`, imported by name at run time,
so a walk cannot see it) and this module are the roots; every module they import, at module level or inside a
function, follows, and so does the `__init__.py` of each package on the way, as Python runs them. Imports under
`if TYPE_CHECKING:` never run and are left out. Nothing under clusterforge/targets takes its `__init__.py`: there
it would import the target's whole package (the registry, the blueprint model), so on a controller
`clusterforge.targets` and `clusterforge.targets.<name>` are namespace packages (PEP 420) and importing a provider
runs nothing else of its target.

Derived, not listed: splitting a module the programs use needs no edit anywhere else. The slurm role asks the same
function through its filter `clusterforge.cluster.controller_modules`, which loads this file by path from the tree
it copies from (so this module imports the standard library only), and the AWS roles bundle carries the same
files. The result names this module too, so a copy (the bundle a baked node unpacks) derives the same list again.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TypeGuard

PACKAGE = "clusterforge"
ROOTS = ("clusterforge/powersave/programs.py", "clusterforge/powersave/payload.py")
PROVIDERS = "clusterforge/targets/*/powersave.py"
NAMESPACES = "clusterforge/targets"  # nothing under it keeps its __init__.py on a controller


def module_files(source: Path) -> dict[str, str]:
    """Dotted module name → path relative to `source` (the folder holding clusterforge/), for every module."""
    out = {}
    for path in sorted((source / PACKAGE).rglob("*.py")):
        relative = path.relative_to(source)
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = relative.as_posix()
    return out


def _type_checking_only(node: ast.AST) -> TypeGuard[ast.If]:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def _import_nodes(tree: ast.AST, type_only: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of the tree, anywhere in it; under `if TYPE_CHECKING:` only when `type_only`."""
    work = [tree]
    while work:
        node = work.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif _type_checking_only(node) and not type_only:
            work.extend(node.orelse)
            continue
        work.extend(ast.iter_child_nodes(node))


def imported(module: str, text: str, is_package: bool, known: Mapping[str, object], type_only: bool = True
             ) -> Iterator[str]:
    """The package modules `module` (whose source is `text`) imports anywhere in its file (`from a import b` may
    name module a.b; a relative import counts from its package); with `type_only=False`, not those under
    `if TYPE_CHECKING:`, which never run."""
    package = module if is_package else module.rpartition(".")[0]
    for node in _import_nodes(ast.parse(text), type_only):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                yield name


def _packages_of(module: str, known: dict[str, str]) -> Iterator[str]:
    """The packages Python imports before `module`: each dotted prefix, but none under the namespace folder."""
    parts = module.split(".")
    for end in range(1, len(parts)):
        package = ".".join(parts[:end])
        if package in known and not known[package].startswith(f"{NAMESPACES}/"):
            yield package


def controller_modules(source: Path) -> tuple[str, ...]:
    """The files (relative to `source`, the folder holding clusterforge/) a controller needs to run the
    power-save programs and every target's provider, sorted."""
    known = module_files(source)
    by_path = {path: module for module, path in known.items()}
    roots = [*ROOTS, *sorted(p.relative_to(source).as_posix() for p in source.glob(PROVIDERS))]
    pending = [by_path[root] for root in roots]
    found: set[str] = set()
    while pending:
        module = pending.pop()
        path = known[module]
        if module in found or _namespace_init(path):
            continue
        found.add(module)
        text = (source / path).read_text(encoding="utf-8")
        pending.extend(imported(module, text, path.endswith("/__init__.py"), known, type_only=False))
        pending.extend(_packages_of(module, known))
    return tuple(sorted(known[module] for module in found))


def _namespace_init(path: str) -> bool:
    return path.startswith(f"{NAMESPACES}/") and path.endswith("/__init__.py")
