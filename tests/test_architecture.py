"""The package's shape: no import cycles, small modules, target names compared and AWS named only inside targets/,
GPU vendors named only inside accelerators/.

Read from the source with `ast`, so every import counts: module-level, inside functions and inside classes.
Only imports under `if TYPE_CHECKING:` are left out: they never run, so they cannot make a cycle at run time.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "clusterforge"
MAX_LINES = 400


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name → file, for every .py file of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return skipped


def imported(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package modules `module` imports anywhere in its file (`from a import b` may name module a.b)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skipped = _type_checking_blocks(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
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


def import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    return {module: set(imported(module, path, known)) for module, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(import_graph(modules())) == []


def test_day_two_imports_nothing_of_the_lab() -> None:
    """`day2` compares renders and rolls changes for every cluster; the lab is one of its callers, never its
    dependency (where the checkout's roles live is `clusterforge.checkout`)."""
    graph = import_graph(modules())
    into_lab = sorted((module, dep) for module, deps in graph.items() if module.startswith("clusterforge.day2")
                      for dep in deps if dep.startswith("clusterforge.lab"))
    assert into_lab == []


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg.b import thing\n")
    (root / "b.py").write_text("def thing():\n    from pkg import a\n    return a\n")
    (root / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n")
    known = modules(root)
    assert cycles(import_graph(known)) == [["pkg.a", "pkg.b"]]


def test_no_module_passes_400_lines() -> None:
    long = {str(path.relative_to(PACKAGE)): n for path in modules().values()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def target_name_comparisons(path: Path, names: set[str]) -> list[int]:
    """Lines comparing with a target's name (`x == "aws"`, `"onprem" != t`, `x in ("aws", ...)`) or matching one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        operands: list[ast.expr] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue):
            operands = [node.pattern.value]
        constants = {c.value for operand in operands for c in ast.walk(operand)
                     if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        if constants & names:
            lines.append(node.lineno if isinstance(node, ast.Compare) else node.pattern.lineno)
    return lines


def found_outside(own: str, lines_of: Callable[[Path], list[int]]) -> dict[str, list[int]]:
    """The modules outside the package `own` (a folder under clusterforge/) where `lines_of` finds something."""
    return {str(path.relative_to(PACKAGE)): lines for path in modules().values()
            if own not in path.relative_to(PACKAGE).parts[:1] and (lines := lines_of(path))}


def test_only_targets_compare_a_target_name() -> None:
    from clusterforge.targets import registered

    names = set(registered())
    assert {"aws", "onprem"} <= names
    assert found_outside("targets", lambda path: target_name_comparisons(path, names)) == {}


@pytest.mark.parametrize("source", ['if cluster.target == "aws":\n    pass\n',
                                    'x = "onprem" != target\n',
                                    'ok = name in ("aws", "gcp")\n',
                                    'match t:\n    case "aws":\n        pass\n'])
def test_the_comparison_check_catches_each_form(tmp_path: Path, source: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    assert target_name_comparisons(module, {"aws", "onprem"})


def vendor_literals(path: Path, names: set[str]) -> list[int]:
    """Lines with a string constant that is an accelerator vendor's name: compared, a mapping's key, a Literal."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted({node.lineno for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names})


def test_only_accelerators_name_a_vendor() -> None:
    """What differs by GPU vendor is declared in clusterforge/accelerators; everything else asks the registry. A
    vendor name that is also a target's (`aws`) is left to the target check above."""
    from clusterforge.accelerators import registered
    from clusterforge.targets import registered as targets

    names = set(registered()) - set(targets())
    assert {"nvidia", "amd"} <= names
    assert found_outside("accelerators", lambda path: vendor_literals(path, names)) == {}


@pytest.mark.parametrize("source", ['if vendor == "amd":\n    pass\n',
                                    'DEVICES = {"nvidia": ("/dev/nvidia", 0)}\n',
                                    'from typing import Literal\nVendor = Literal["nvidia", "amd"]\n',
                                    'def files(vendor: str = "nvidia") -> str:\n    return vendor\n'])
def test_the_vendor_check_catches_each_form(tmp_path: Path, source: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    assert vendor_literals(module, {"nvidia", "amd"})


# A target package's own names: its package, its blueprint section, its outputs, its project folder, its vars and
# the tables of its keys' effects.
AWS_KNOWLEDGE = re.compile(r'targets\.aws|cluster\.aws|StackOutputs|"stacks" / "aws"|aws_region|STACK_FACTS|PULUMI_')


def aws_knowledge(path: Path) -> list[int]:
    """Lines of a module that name what only target aws knows."""
    return [number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if AWS_KNOWLEDGE.search(line)]


def test_only_targets_know_aws() -> None:
    """Layers below the targets ask the target (`target_of(cluster)`, `registered()`) for node facts, deployed
    outputs, group vars, the project folder and day-two effects; a second cloud is then one folder."""
    assert found_outside("targets", aws_knowledge) == {}


@pytest.mark.parametrize("source", ["from clusterforge.targets.aws.efa import placement_group\n",
                                    "region = cluster.aws.region\n",
                                    'out["aws_region"] = region\n',
                                    'stack = Path.cwd() / "stacks" / "aws"\n'])
def test_the_aws_check_catches_each_form(tmp_path: Path, source: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    assert aws_knowledge(module) == [1]
