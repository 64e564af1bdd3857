"""The package's shape: no import cycles, small modules, target names compared, used as keys or literals and AWS
named only inside targets/ (a second cloud is one folder), GPU vendors named only inside accelerators/.

Read from the source with `ast`, so every import counts: module-level, inside functions, inside classes and under
`if TYPE_CHECKING:`. A type-only import never runs, but it still ties the importer to the module it names: a cycle
through one is a design that cannot be split, and mypy has to read both ends together.

The layers are a table in docs/contributing.md ("## Layers"): the test reads it from there, so the table the
contributors read is the one the package is held to.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clusterforge.powersave import payload

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


def imported(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package modules `module` imports anywhere in its file, `if TYPE_CHECKING:` included: the same walk
    that derives what a controller gets (clusterforge.powersave.payload), there without the type-only imports."""
    yield from payload.imported(module, path.read_text(encoding="utf-8"), path.name == "__init__.py", known)


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
    dependency (where the checkout's roles live is `clusterforge.files.checkout`)."""
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


def test_the_cycle_check_finds_a_cycle_through_a_type_checking_import(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg.b import thing\n")
    (root / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import Thing\n"
                               "thing = 1\n")
    assert cycles(import_graph(modules(root))) == [["pkg.a", "pkg.b"]]


CONTRIBUTING = PACKAGE.parent / "docs" / "contributing.md"
Layers = list[tuple[str, tuple[str, ...]]]


def layer_table(markdown: str, package: str = PACKAGE.name) -> Layers:
    """The "## Layers" table of a contributing guide, bottom layer first: (layer, the full module names of its row).

    A row is `| n | layer | `name`, `name` | what it holds |`. Names are relative to the package (`package` itself
    is its own name)."""
    found = re.search(r"^## Layers\n(.*?)(?=^## |\Z)", markdown, flags=re.M | re.S)
    section = found.group(1) if found else ""
    table: Layers = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            names = re.findall(r"`([\w.]+(?:\.\*)?)`", cells[2])
            table.append((cells[1], tuple(n if n == package else f"{package}.{n}" for n in names)))
    return table


def _covers(name: str, module: str) -> bool:
    """`name` is `module` or a package above it; the package's own name covers only its `__init__`, so a module
    the table forgot is not silently placed in its row. `pkg.*` covers everything inside `pkg` (each plug-in package
    found there at run time, so a new one needs no row of its own)."""
    if name.endswith(".*"):
        return module.startswith(name[:-1])
    return name == module or ("." in name and module.startswith(f"{name}."))


def layer_of(module: str, table: Layers) -> int | None:
    """The row of the most specific name covering `module` (the deepest: `targets.aws` before `targets`)."""
    rows = [(name.count("."), not name.endswith(".*"), row)  # `pkg.*` is deeper than `pkg`, a named module wins
            for row, (_, names) in enumerate(table) for name in names if _covers(name, module)]
    return max(rows)[2] if rows else None


def layer_violations(graph: dict[str, set[str]], table: Layers) -> list[str]:
    """Every import from a module into a layer above its own, as `importer -> imported (its layer -> theirs)`."""
    out = []
    for module, deps in sorted(graph.items()):
        mine = layer_of(module, table)
        for dep in sorted(deps):
            theirs = layer_of(dep, table)
            if mine is not None and theirs is not None and theirs > mine:
                out.append(f"{module} -> {dep} ({table[mine][0]} -> {table[theirs][0]})")
    return out


def table_problems(known: dict[str, Path], table: Layers) -> list[str]:
    """Modules the table places nowhere, names it gives twice, and names that cover no module (a stale row)."""
    names = [name for _, row in table for name in row]
    return ([f"no layer: {m}" for m in known if layer_of(m, table) is None]
            + [f"named twice: {n}" for n in sorted({n for n in names if names.count(n) > 1})]
            + [f"no such module: {n}" for n in names if not any(_covers(n, m) for m in known)])


def test_the_layer_table_places_every_module() -> None:
    table = layer_table(CONTRIBUTING.read_text(encoding="utf-8"))
    assert len(table) > 5
    assert table_problems(modules(), table) == []


def test_no_module_imports_a_higher_layer() -> None:
    """docs/contributing.md's layers, bottom first: a module imports from its own layer and those below, never one
    above (a type-only import included); a lower layer reaches a target package only through the registry."""
    table = layer_table(CONTRIBUTING.read_text(encoding="utf-8"))
    assert layer_violations(import_graph(modules()), table) == []


LAYERS_DOC = """## Layers

| # | Layer | Modules | What |
|---|---|---|---|
| 1 | low | `pkg`, `low` | the bottom |
| 2 | kernel | `plug`, `plug.api` | the registry |
| 3 | high | `high`, `plug.*` | everything else |

## Next
| 4 | ignored | `extra` | another section's table |
"""


def test_the_layer_check_finds_an_upward_import(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    (root / "plug" / "one").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high import H\n")
    (root / "high.py").write_text("from pkg.low import x\nfrom pkg.plug import registry\n")
    (root / "plug" / "__init__.py").write_text("from pkg.plug.api import Api\n")
    (root / "plug" / "api.py").write_text("def f():\n    from pkg.plug.one import X\n")
    (root / "plug" / "one" / "__init__.py").write_text("from pkg.high import H\n")
    (root / "extra.py").write_text("")
    table = layer_table(LAYERS_DOC, "pkg")
    assert [name for name, _ in table] == ["low", "kernel", "high"]
    known = modules(root)
    assert layer_of("pkg.plug.api", table) == 1 and layer_of("pkg.plug.one", table) == 2
    assert layer_violations(import_graph(known), table) == [
        "pkg.low -> pkg.high (low -> high)", "pkg.plug.api -> pkg.plug.one (kernel -> high)"]
    assert table_problems(known, [*table, ("stale", ("pkg.gone", "pkg.low"))]) == [
        "no layer: pkg.extra", "named twice: pkg.low", "no such module: pkg.gone"]


def folders(known: dict[str, Path]) -> dict[str, str]:
    """Each module's top-level folder of the package; the modules at the package's root are the folder "root"."""
    root = known[min(known, key=len)].parent  # the package's own name is the shortest: its `__init__.py`
    return {module: parts[0] if len(parts := path.relative_to(root).parts) > 1 else "root"
            for module, path in known.items()}


def folder_floors(known: dict[str, Path], table: Layers) -> dict[str, dict[int, list[str]]]:
    """Each top-level folder: the layer rows its modules lie in, each with those modules."""
    out: dict[str, dict[int, list[str]]] = {}
    for module, folder in folders(known).items():
        row = layer_of(module, table)
        if row is not None:
            out.setdefault(folder, {}).setdefault(row, []).append(module)
    return out


def folder_arrows(graph: dict[str, set[str]], known: dict[str, Path], table: Layers) -> list[str]:
    """Imports from a folder into a folder on a higher floor (a folder's floor: the highest layer among its modules),
    each (importer's folder, imported folder) pair once, as `folder -> folder (its floor -> theirs): an example`."""
    floor = {folder: max(rows) for folder, rows in folder_floors(known, table).items()}
    folder = folders(known)
    found: dict[tuple[str, str], str] = {}
    for module, deps in sorted(graph.items()):
        for dep in sorted(deps):
            mine, theirs = folder[module], folder[dep]
            if mine != theirs and floor[theirs] > floor[mine]:
                found.setdefault((mine, theirs), f"{module} -> {dep}")
    return [f"{mine} -> {theirs} ({table[floor[mine]][0]} -> {table[floor[theirs]][0]}): {example}"
            for (mine, theirs), example in sorted(found.items())]


def split_folders(known: dict[str, Path], table: Layers) -> list[str]:
    """The folders whose modules lie in more than one layer row, each with its rows and their modules."""
    return [f"{folder}: " + "; ".join(f"{table[row][0]}: {', '.join(sorted(modules))}"
                                      for row, modules in sorted(rows.items()))
            for folder, rows in sorted(folder_floors(known, table).items()) if len(rows) > 1]


MAX_FOLDER_ARROWS = 0  # every folder sits on one floor (issue 46 asked at most 5; 28 before)


def test_folders_import_down_the_floors() -> None:
    """Read at the grain of folders, the package points one way too: a folder's floor is its highest layer, and an
    import from a folder into a folder on a higher floor is an arrow up (each pair of folders counted once)."""
    table = layer_table(CONTRIBUTING.read_text(encoding="utf-8"))
    known = modules()
    arrows = folder_arrows(import_graph(known), known, table)
    assert len(arrows) <= MAX_FOLDER_ARROWS, f"{len(arrows)} folder arrows point up:\n" + "\n".join(arrows)


def test_every_folder_sits_on_one_floor() -> None:
    """Each top-level folder of the package holds modules of one layer row only (the root, `__init__` and
    `__main__`, included), so a folder's name says its floor."""
    table = layer_table(CONTRIBUTING.read_text(encoding="utf-8"))
    assert split_folders(modules(), table) == []


def test_the_folder_checks_find_an_arrow_up_and_a_split_folder(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    for folder in ("plug", "base", "top"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "loose.py").write_text("from pkg.top import T\n")  # root: layer low -> an arrow up into top
    (root / "base" / "one.py").write_text("from pkg.plug.api import A\n")  # base (low) -> plug, on kernel for api
    (root / "plug" / "api.py").write_text("from pkg.base import one\n")
    (root / "top" / "cmd.py").write_text("from pkg.loose import x\nfrom pkg.plug import api\n")
    doc = """## Layers

| # | Layer | Modules | What |
|---|---|---|---|
| 1 | low | `pkg`, `loose`, `base`, `plug` | the bottom |
| 2 | kernel | `plug.api` | the registry, in a folder of the bottom |
| 3 | high | `top` | everything else |
"""
    table = layer_table(doc, "pkg")
    known = modules(root)
    assert folders(known)["pkg.loose"] == "root" and folders(known)["pkg.plug.api"] == "plug"
    assert folder_arrows(import_graph(known), known, table) == [
        "base -> plug (low -> kernel): pkg.base.one -> pkg.plug.api",
        "root -> top (low -> high): pkg.loose -> pkg.top"]
    assert split_folders(known, table) == ["plug: low: pkg.plug; kernel: pkg.plug.api"]


# A feed's `amps` is read by the power rules through the physics and the rules' context: the files between the
# blueprint's field and its finding, counted so that a new layer of indirection shows.
MAX_AMPS_FILES = 8


def test_a_feeds_amps_reaches_its_finding_through_at_most_8_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` of the on-prem example, with every read of `Feed.amps` recording the package's modules on the call
    stack (the CLI's left out): the reads made under the power rules' module, plus the module declaring `Feed`, are
    the files a reader follows from the field to a PWR finding."""
    import sys

    from click.testing import CliRunner

    from clusterforge.cli.main import app
    from clusterforge.model.site import Feed
    from clusterforge.policies.registry import REGISTRY

    stacks: set[tuple[str, ...]] = set()
    original = Feed.__getattribute__

    def recording(self: Feed, name: str) -> object:
        if name == "amps":
            frame, found = sys._getframe(1), []
            while frame is not None:
                module = str(frame.f_globals.get("__name__", ""))
                if module.startswith("clusterforge.") and not module.startswith("clusterforge.cli"):
                    found.append(module)
                frame = frame.f_back
            stacks.add(tuple(dict.fromkeys(found)))
        return original(self, name)

    monkeypatch.setattr(Feed, "__getattribute__", recording)
    result = CliRunner().invoke(app, ["check", str(PACKAGE.parent / "examples" / "onprem-dgx-h100.yaml")])
    assert result.exit_code == 0, result.output
    power = REGISTRY["PWR-001"].check.__module__
    files = {Feed.__module__, *(module for stack in stacks if power in stack for module in stack)}
    assert power in files and len(files) <= MAX_AMPS_FILES, f"{len(files)} files: {', '.join(sorted(files))}"


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
    from clusterforge.target_kernel import registered

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
    from clusterforge.accelerator_kernel import registered
    from clusterforge.target_kernel import registered as targets

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


def test_the_readme_layout_names_every_package() -> None:
    """README's Layout lists each package under clusterforge/ (`name/`), so a new one is placed there too."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    layout = readme.partition("\n## Layout\n")[2].partition("\n## ")[0]
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert [name for name in packages if not re.search(rf"(?<![\w/]){name}/", layout)] == []


# AWS named in code outside targets/: a line of code (comments and docstrings left out) with an identifier part, the
# text split on `_` and on anything not a letter or digit, that is one of these words whatever its case
# (`aws_region`, `"efa"`, `boto3.client`, `"/fsx"`). What is left names AWS where another team owns the file, or in
# the blueprint's own contract; each line is listed when the count grows.
AWS_WORDS = frozenset({"aws", "ec2", "efa", "fsx", "boto3"})
MAX_AWS_LINES = 5  # 0 today (the EFA pins are target aws's own, software_pins.py)
# AWS's own accelerators are a vendor whose room names AWS as NVIDIA's names NVIDIA: its SDK's tables pin the EFA
# installer its releases were built with. A second cloud never reads them, so that room is not "outside" AWS.
AWS_VENDOR_ROOM = ("accelerators", "aws_neuron")


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:
                if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str) and stmt.end_lineno is not None):
                    lines.update(range(stmt.lineno, stmt.end_lineno + 1))
    return lines


def aws_lines(path: Path, words: frozenset[str] = AWS_WORDS, names: re.Pattern[str] | None = None) -> list[int]:
    """Lines of code of a module with an identifier part that names AWS, or another of `words` (a multi-line
    string: each of its lines); `names`: product names taken out first, whose parts are not words of theirs."""
    text = path.read_text(encoding="utf-8")
    docstrings = _docstring_lines(ast.parse(text))
    found: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if token.type == tokenize.STRING and token.start[0] in docstrings:
            continue
        for offset, line in enumerate((names.sub(" ", token.string) if names else token.string).split("\n")):
            if {part.lower() for part in re.split(r"[\W_]+", line) if part} & words:
                found.add(token.start[0] + offset)
    return sorted(found)


def aws_outside_targets(root: Path = PACKAGE) -> dict[str, list[tuple[int, str]]]:
    """Each module outside root/targets that names AWS, with those lines."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] != "targets" and relative.parts[:2] != AWS_VENDOR_ROOM and (numbers := aws_lines(path)):
            lines = path.read_text(encoding="utf-8").splitlines()
            out[relative.as_posix()] = [(n, lines[n - 1].strip()) for n in numbers]
    return out


def test_aws_is_named_in_at_most_5_lines_outside_targets() -> None:
    """A cloud's power provider, instance catalog, prices, software and fabric specifics live in its target's folder;
    the rest asks the target. The few lines left are listed when the count is over."""
    found = aws_outside_targets()
    count = sum(len(lines) for lines in found.values())
    listing = "\n".join(f"{file}:{n}: {line}" for file, lines in found.items() for n, line in lines)
    assert count <= MAX_AWS_LINES, f"{count} lines of code name AWS outside clusterforge/targets/:\n{listing}"


def test_the_aws_count_counts_code_and_leaves_out_comments_and_docstrings(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""AWS in a docstring, EC2 too."""\n'
                      "import boto3  # a comment naming EFA\n"
                      "region = cfg.aws_region\n"
                      'MOUNT = "/fsx"\n'
                      "def f():\n"
                      '    """FSx, in a docstring."""\n'
                      "    return Ec2Provider, awsome, 1\n"  # one identifier: no part of it is a word above
                      'TEXT = """line one\n'
                      'efa on line two"""\n')
    assert aws_lines(module) == [2, 3, 4, 9]


# GPU vendors named in code outside clusterforge/accelerators/ (the same count as AWS's: code only, by identifier
# part). Everything that differs by vendor lives in the vendor's room there. 249 lines when it was set, 231 once
# the blueprint's pins came from the vendors' modules, 93 once each vendor's compatibility tables, checks and lab
# stand-ins moved to its room (the software tables, policies/software_compat.py and lab/repo.py name none), 29 once
# the health commands took the vendor's tools from its room (health_tools.py), the plugin's rows said what they need
# of the stack in their own keys (catalog RequiresRow) and the vendor named its scale-up domain. Left: rule and
# range sources that cite a vendor's document (22), and names users' files and programs already use: the blueprint's
# `operations.health.dcgm_diag_level` and its role variable, `health allreduce`'s verdict `nccl-wrong`, the
# gpu_architecture table's `min_rocm` key, the nccl role's variable for the plugin's repository, and the name of
# AWS's public DLAMI parameter.
# aws-ofi-nccl is AWS's EFA plugin, an EFA pin of target aws (its tables and checks are the target's): its name
# counts for AWS (every `aws` part does, outside targets/), not for the vendor whose library loads it.
VENDOR_WORDS = frozenset({"nvidia", "amd", "amdgpu", "cuda", "rocm", "nccl", "rccl", "neuron", "dcgm", "nvml",
                          "nvlink", "nvswitch", "trainium", "inferentia"})
TARGET_PRODUCTS = re.compile(r"aws[-_]ofi[-_]nccl", re.IGNORECASE)
MAX_VENDOR_LINES = 30


def vendor_lines_outside_accelerators(root: Path = PACKAGE) -> dict[str, int]:
    return {str(path.relative_to(root)): len(found) for path in sorted(root.rglob("*.py"))
            if path.relative_to(root).parts[0] != "accelerators"
            and (found := aws_lines(path, VENDOR_WORDS, TARGET_PRODUCTS))}


def test_vendors_are_named_in_at_most_30_lines_outside_accelerators() -> None:
    found = vendor_lines_outside_accelerators()
    listing = "\n".join(f"{count:4} {file}" for file, count in sorted(found.items(), key=lambda kv: -kv[1]))
    assert sum(found.values()) <= MAX_VENDOR_LINES, f"{sum(found.values())} lines name a GPU vendor:\n{listing}"


def test_the_vendor_count_finds_a_vendor_in_code(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""NVIDIA in a docstring."""\nSTACK = "cuda"\nfrom x import nccl_version\nAMD = 1  # ROCm\n')
    assert aws_lines(module, VENDOR_WORDS) == [2, 3, 4]
    plugin = tmp_path / "plugin.py"
    plugin.write_text('KEY = "aws_ofi_nccl"\nNAME = "aws-ofi-nccl needs nccl"\nVAR = "nccl_aws_ofi_nccl_repo"\n')
    assert aws_lines(plugin, VENDOR_WORDS, TARGET_PRODUCTS) == [2, 3]  # the plugin's name alone is target aws's
    assert aws_lines(plugin, AWS_WORDS) == [1, 2, 3]


def target_package_names() -> set[str]:
    """Every package under clusterforge/targets that exports a TARGET, and the test fixture's targets."""
    folders = [*(PACKAGE / "targets").iterdir(), *(PACKAGE.parent / "tests" / "fixtures" / "targets").iterdir()]
    return {folder.name for folder in folders
            if (folder / "__init__.py").is_file() and re.search(r"^TARGET\b", (folder / "__init__.py").read_text(
                encoding="utf-8"), flags=re.M)}


# Keys and literals that are spelled like a target but are not one: (module, word): why
NOT_TARGETS = {("cli/app.py", "lab"): "the `lab` command's module (COMMAND_MODULES), not target lab"}


def target_name_literals(path: Path, names: set[str]) -> list[int]:
    """Lines where a target's name is a dict literal's key or is inside `Literal[...]` (a table by target, a type
    that lists targets): what a new target would have to be added to."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        keys: list[ast.expr] = []
        if isinstance(node, ast.Dict):
            keys = [key for key in node.keys if key is not None]
        elif isinstance(node, ast.Subscript):
            base = node.value
            if (base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else "") == \
                    "Literal":
                keys = [node.slice]
        lines += [c.lineno for key in keys for c in ast.walk(key)
                  if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in names]
    return sorted(set(lines))


def target_literals_outside(root: Path, names: set[str]) -> dict[str, list[int]]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.split("/")[0] == "targets":
            continue
        allowed = {word for module, word in NOT_TARGETS if module == relative}
        if lines := target_name_literals(path, names - allowed):
            out[relative] = lines
    return out


def test_no_target_name_is_a_key_or_a_literal_outside_targets() -> None:
    """A table keyed by target names or a `Literal` of them is a list a new target must be added to: the target
    declares what differs instead (its `power.py`, its `catalog.py`), and the rest asks it."""
    names = target_package_names()
    assert {"aws", "onprem", "lab", "testcloud"} <= names
    assert target_literals_outside(PACKAGE, names) == {}


@pytest.mark.parametrize("source", ['PROVIDERS = {"aws": 1, "lab": 2}\n',
                                    'from typing import Literal\nProvider = Literal["aws", "lab"]\n',
                                    'import typing\nx: typing.Literal["onprem"] | None = None\n',
                                    'table = {**base, "testcloud": 3}\n',
                                    'from typing import Literal, Optional\ny: Optional[Literal["lab"]] = None\n'])
def test_the_target_literal_check_catches_each_form(tmp_path: Path, source: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    assert target_name_literals(module, {"aws", "onprem", "lab", "testcloud"})


# The power-save programs and the BMC fleet runner speak of nodes: powered on, off, read. A cloud's API and a BMC's
# protocol are the providers' and the protocol modules' (targets/<name>/powersave.py, bmc/<protocol>.py).
PROTOCOL_AND_CLOUD_WORDS = AWS_WORDS | {"redfish", "ipmi", "sushy", "pyghmi", "gcp", "azure"}


def test_the_power_save_programs_and_the_fleet_runner_name_no_protocol_and_no_cloud() -> None:
    files = [*sorted((PACKAGE / "powersave").glob("*.py")), PACKAGE / "bmc" / "fleet.py"]
    found = {str(path.relative_to(PACKAGE)): lines for path in files
             if (lines := aws_lines(path, PROTOCOL_AND_CLOUD_WORDS))}
    assert found == {}


def test_the_protocol_check_finds_a_protocol_in_code(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Redfish in a docstring."""\nfrom clusterforge.bmc.redfish import begin\nKIND = "ipmi"\n')
    assert aws_lines(module, PROTOCOL_AND_CLOUD_WORDS) == [2, 3]


# Size lives in modules, not in long functions: at most this many functions of more than 50 lines, counted from
# `def` to the last line with the docstring left out (a command's docstring is its --help text, not its size).
MAX_LONG_FUNCTIONS = 8
LONG_LINES = 50


def function_lengths(path: Path) -> dict[str, int]:
    """Each function's lines (nested ones too, by `outer.inner`), its docstring left out."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and child.end_lineno is not None:
                size = child.end_lineno - child.lineno + 1
                first = child.body[0]
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str) and first.end_lineno is not None):
                    size -= first.end_lineno - first.lineno + 1
                lengths[f"{prefix}{child.name}"] = size
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, f"{prefix}{child.name}." if isinstance(child, ast.ClassDef) else prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_at_most_8_functions_pass_50_lines() -> None:
    long = {f"{path.relative_to(PACKAGE)}:{name}": size for path in sorted(PACKAGE.rglob("*.py"))
            for name, size in function_lengths(path).items() if size > LONG_LINES}
    listing = "\n".join(f"{where}: {size} lines" for where, size in sorted(long.items(), key=lambda kv: -kv[1]))
    assert len(long) <= MAX_LONG_FUNCTIONS, f"{len(long)} functions over {LONG_LINES} lines:\n{listing}"


def test_the_length_check_leaves_out_the_docstring_and_counts_nested_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('def f():\n    """Doc\n    on two lines."""\n    x = 1\n\n    def g():\n        return x\n'
                      '    return g\n\n\nclass C:\n    def m(self):\n        pass\n')
    assert function_lengths(module) == {"f": 6, "f.g": 2, "C.m": 2}


# A target is its identity (name, title, hardware, facility): what it does in each stage is that stage's interface,
# found by module (target_kernel.stages), so Target does not grow with every stage again (31 fields once, 7 `Any`).
MAX_TARGET_FIELDS = 6
PROTOCOL = PACKAGE / "target_kernel" / "protocol.py"


def dataclass_fields(path: Path) -> dict[str, dict[str, str]]:
    """Each class's annotated fields in a module, with their annotations as written."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: {item.target.id: ast.unparse(item.annotation) for item in node.body
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
            for node in tree.body if isinstance(node, ast.ClassDef)}


def untyped_hooks(fields: dict[str, dict[str, str]]) -> list[str]:
    """Fields typed `Any`, or hooks whose arguments are not said (`Callable[..., X]`, `Iterable[Any]`)."""
    loose = re.compile(r"^Any$|Callable\[\.\.\.|Iterable\[Any\]|^object$")
    return [f"{cls}.{name}: {annotation}" for cls, own in fields.items() for name, annotation in own.items()
            if loose.search(annotation)]


def test_target_is_its_identity_and_every_stage_interface_is_typed() -> None:
    fields = dataclass_fields(PROTOCOL)
    assert len(fields["Target"]) <= MAX_TARGET_FIELDS, f"Target has {len(fields['Target'])}: {list(fields['Target'])}"
    assert {"BlueprintPart", "NodePower", "RenderPart"} <= fields.keys()
    assert untyped_hooks(fields) == []


def test_the_interface_check_finds_a_hook_typed_any(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("class Target:\n    name: str\n    effects: Any = None\n    hook: Callable[..., int]\n")
    assert untyped_hooks(dataclass_fields(module)) == ["Target.effects: Any", "Target.hook: Callable[..., int]"]
