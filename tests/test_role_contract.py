"""The contract between `clusterforge render` and the roles, in each role's meta/argument_specs.yml.

A role declares every variable it reads from outside itself: its defaults, what render writes into the inventory,
what site.yml sets. Ansible validates them when the role starts. Without the declarations a variable render
writes that no role reads, or one renamed on one side only, fails silently: the role falls back to its default.
So every render here (each example, each team template with its defaults, the lab, the inventories made from
stack outputs) must write only declared variables, of the declared types, and every role must declare exactly
what it reads.

The variable tables in roles/<role>/README.md are generated from the specs; after changing a spec:
    CLUSTERFORGE_UPDATE_ROLE_DOCS=1 .venv/bin/python -m pytest tests/test_role_contract.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from click.testing import CliRunner
from jinja2 import nodes

from clusterforge.blueprint.templating import discover
from clusterforge.cli.main import app
from clusterforge.render.yamlout import load
from tests.conftest import ROOT, example_files

ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())
# The roles site.yml applies to every node; the others (provisioning: the site's boot server) have plays of their own.
SITE_ROLES = sorted(role for role in yaml.safe_load((ROOT / "site.yml").read_text())[0]["roles"])
UPDATE_DOCS = os.environ.get("CLUSTERFORGE_UPDATE_ROLE_DOCS") == "1"
BIN = Path(sys.executable).parent


def not_role_inputs() -> dict[str, str]:
    """The keys render writes that no role reads, declared as such in the product with what each is: the facts for
    people and Ansible's connection vars (clusterforge/render/facts.yaml), and each target's own (its
    TargetEffects.descriptions: AWS's region, instance ids, ...)."""
    from clusterforge.render.change_classes import TargetEffects
    from clusterforge.render.declarations import facts
    from clusterforge.target_kernel import registered, stage_value

    found = {key: declared.description or "" for key, declared in facts().items()}
    for target in registered().values():
        table = stage_value(target, "day2", "EFFECTS", TargetEffects)
        found |= dict(table.descriptions) if table is not None else {}
    return found


# What Ansible itself provides to a role: facts and magic variables, loop and lookup names, and Jinja's own
# globals (range, dict, namespace, ...).
_ANSIBLE_NAMES = frozenset({
    "inventory_hostname", "inventory_hostname_short", "inventory_dir", "inventory_file", "groups", "group_names",
    "hostvars", "play_hosts", "playbook_dir", "role_path", "item", "omit", "lookup", "query", "q",
    *jinja2.defaults.DEFAULT_NAMESPACE})
# Task keys whose value is a bare Jinja expression, not a template.
_CONDITIONALS = frozenset({"when", "changed_when", "failed_when", "until", "that"})
_JINJA = jinja2.Environment()


# --- the roles ---------------------------------------------------------------------------------------------------

def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) if path.is_file() else None


@cache
def entry_point(role: str) -> dict[str, Any]:
    """The `main` entry point of the role's argument specs (the one site.yml's `roles:` validates against)."""
    specs = _yaml(ROOT / "roles" / role / "meta" / "argument_specs.yml") or {}
    main: dict[str, Any] = (specs.get("argument_specs") or {}).get("main") or {}
    return main


def options(role: str) -> dict[str, dict[str, Any]]:
    opts: dict[str, dict[str, Any]] = entry_point(role).get("options") or {}
    return opts


def defaults(role: str) -> dict[str, Any]:
    found: dict[str, Any] = _yaml(ROOT / "roles" / role / "defaults" / "main.yml") or {}
    return found


def _template_names(text: str) -> set[str]:
    """Variables a Jinja template reads: free names, and attributes read through `hostvars[host].`."""
    with warnings.catch_warnings():  # Jinja's lexer warns about regex escapes such as '\s' in string literals
        warnings.simplefilter("ignore", DeprecationWarning)
        ast = _JINJA.parse(text)
    local = {n.name for n in ast.find_all(nodes.Name) if n.ctx in ("store", "param")}
    names = {n.name for n in ast.find_all(nodes.Name) if n.ctx == "load"} - local
    for attr in ast.find_all(nodes.Getattr):
        item = attr.node
        if isinstance(item, nodes.Getitem) and isinstance(item.node, nodes.Name) and item.node.name == "hostvars":
            names.add(attr.attr)
    return names


def _value_names(data: Any, key: object = None) -> set[str]:
    if isinstance(data, dict):
        return {n for k, v in data.items() for n in _value_names(v, k)}
    if isinstance(data, list):
        return {n for v in data for n in _value_names(v, key)}
    if isinstance(data, str) and key in _CONDITIONALS:
        return _template_names("{{ " + data + " }}")
    if isinstance(data, str) and ("{{" in data or "{%" in data):
        return _template_names(data)
    return set()


@cache
def reads(role: str) -> frozenset[str]:
    """Every variable the role's tasks, handlers, templates, vars and defaults read (their values, not their keys)."""
    folder = ROOT / "roles" / role
    names: set[str] = set()
    for sub in ("tasks", "handlers", "vars", "defaults"):
        for path in sorted((folder / sub).glob("*.yml")):
            names |= _value_names(_yaml(path))
    for path in sorted((folder / "templates").glob("*.j2")):
        names |= _template_names(path.read_text())
    return frozenset(names)


def _set_in(data: Any) -> Iterator[str]:
    """Names a task list makes for itself: registered results, facts, task vars, loop variables."""
    if isinstance(data, list):
        for item in data:
            yield from _set_in(item)
    elif isinstance(data, dict):
        if isinstance(data.get("register"), str):
            yield data["register"]
        for module in ("ansible.builtin.set_fact", "set_fact"):
            yield from (k for k in data.get(module) or {} if k != "cacheable")
        if isinstance(data.get("vars"), dict):
            yield from data["vars"]
        loop_var = (data.get("loop_control") or {}).get("loop_var")
        if loop_var:
            yield loop_var
        for value in data.values():
            yield from _set_in(value)


def internal(role: str) -> set[str]:
    """The role's own working names: vars/main.yml and what its tasks and handlers set."""
    folder = ROOT / "roles" / role
    names = set(_yaml(folder / "vars" / "main.yml") or {})
    for sub in ("tasks", "handlers"):
        for path in sorted((folder / sub).glob("*.yml")):
            names |= set(_set_in(_yaml(path)))
    return names


def ansible_provides(name: str) -> bool:
    return name.startswith("ansible_") or name in _ANSIBLE_NAMES


def declared_by(name: str) -> list[str]:
    return [role for role in ROLES if name in options(role)]


# --- what render writes ------------------------------------------------------------------------------------------

Written = dict[str, dict[str, list[Any]]]  # variable -> where it is written -> the distinct values written there


def _add(found: Written, where: str, variables: dict[str, Any] | None) -> None:
    for name, value in (variables or {}).items():
        values = found.setdefault(name, {}).setdefault(where, [])
        if value not in values:
            values.append(value)


def _inventory_vars(found: Written, where: str, group: str, body: dict[str, Any] | None) -> None:
    body = body or {}
    _add(found, f"{where} ({group} vars)", body.get("vars"))
    for hostvars in (body.get("hosts") or {}).values():
        _add(found, f"{where} (host vars)", hostvars)
    for child, child_body in (body.get("children") or {}).items():
        _inventory_vars(found, where, child, child_body)


def written_in(out: Path) -> Written:
    """Every variable of a rendered inventory (hosts.yml and the group_vars/host_vars beside it)."""
    found: Written = {}
    inventory = out / "inventory"
    for path in sorted(inventory.glob("group_vars/*.yml")) + sorted(inventory.glob("host_vars/*.yml")):
        _add(found, path.relative_to(out).as_posix(), load(path.read_text()))
    hosts = inventory / "hosts.yml"
    _inventory_vars(found, "inventory/hosts.yml", "all", (load(hosts.read_text()) or {}).get("all"))
    return found


def _cli(*args: object) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def stack_outputs(blueprint: Path, planned: Path) -> dict[str, Any]:
    """What `pulumi stack output --json` prints for a blueprint's cluster: its planned hosts (and the controller
    AWS adds when no pool holds it) at made-up addresses, an FSx file system and a checkpoint bucket."""
    data = yaml.safe_load(blueprint.read_text())
    groups = load((planned / "inventory" / "hosts.yml").read_text())["all"]["children"]
    nodes_out: list[dict[str, Any]] = []
    for pool in data["pools"]:
        for name in (groups.get("pool_" + pool["name"].replace("-", "_")) or {}).get("hosts") or {}:
            nodes_out.append({"name": name, "pool": pool["name"], "role": pool.get("role", "compute"),
                              "instance_type": pool["hardware"]})
    controller = next(iter(groups["slurm_controller"]["hosts"]))
    if controller not in {n["name"] for n in nodes_out}:
        nodes_out.append({"name": controller, "pool": "controller", "role": "controller",
                          "instance_type": "m7i.4xlarge"})
    for number, node in enumerate(nodes_out):
        node |= {"instance_id": f"i-{number:017x}", "private_ip": f"10.0.{number // 200}.{number % 200 + 10}"}
    address = next(n["private_ip"] for n in nodes_out if n["name"] == controller)
    fsx = "fs-0123456789abcdef0"
    return {"outputs_version": 1, "cluster": data["name"], "region": data["aws"]["region"], "nodes": nodes_out,
            "controller": {"name": controller, "private_ip": address},
            "checkpoint_bucket": f"{data['name']}-checkpoints",
            "lustre": {"file_system_id": fsx, "dns_name": f"{fsx}.fsx.{data['aws']['region']}.amazonaws.com",
                       "mount_name": "abcdefgh", "mount": data["storage"]["lustre"]["mount"]}}


def _examples() -> dict[str, Path]:
    """The example blueprints by name: examples/<name>, and ../shared/examples/<name> as shared/examples/<name>."""
    return {path.relative_to(ROOT if path.is_relative_to(ROOT) else ROOT.parent).with_suffix("").as_posix(): path
            for path in example_files()}


STACK_EXAMPLE = ROOT / "examples" / "aws-p5.yaml"
STACK_SOURCES = ("render --from-stack", "inventory --from-stack --connection ssm")
SOURCES = [*_examples(), *(f"templates/{name}" for name in sorted(discover())), "lab", *STACK_SOURCES]


def render_source(source: str, tmp: Path) -> Written:
    """Render one source into `tmp`/out the way a user would, and read back every variable it wrote."""
    out = tmp / "out"
    examples = _examples()
    if source in examples:
        _cli("render", examples[source], "-o", out, "--force")
    elif source.startswith("templates/"):
        blueprint = tmp / "blueprint.yaml"
        _cli("new", source.removeprefix("templates/"), "-o", blueprint)
        _cli("render", blueprint, "-o", out)
    elif source == "lab":
        from clusterforge.lab.render import DEFAULT_BLUEPRINT, DEFAULT_CATALOG, data_file, render

        render(data_file(DEFAULT_BLUEPRINT), [data_file(DEFAULT_CATALOG)], None, out)
        found = written_in(out)
        _add(found, "the lab's extra vars", lab_extra_vars(tmp))
        return found
    elif source in STACK_SOURCES:
        planned = tmp / "planned"
        _cli("render", STACK_EXAMPLE, "-o", planned)
        outputs = tmp / "outputs.json"
        outputs.write_text(json.dumps(stack_outputs(STACK_EXAMPLE, planned), indent=2))
        if source == "render --from-stack":
            _cli("render", STACK_EXAMPLE, "-o", out, "--from-stack", outputs)
        else:
            _cli("inventory", "--from-stack", outputs, "--connection", "ssm", "-o", out / "inventory" / "hosts.yml")
    else:
        raise AssertionError(f"unknown source {source}")
    return written_in(out)


def lab_extra_vars(tmp: Path) -> dict[str, Any]:
    """The variables `clusterforge lab` passes to site.yml besides the rendered inventory."""
    from clusterforge.lab.labvars import lab_vars
    from clusterforge.lab.paths import LabPaths
    from clusterforge.lab.repo import Repo

    return lab_vars(LabPaths("t", tmp / "lab"), Repo(tmp / "repo", {"efa_installer": ("efa.tar.gz", "0" * 64)}))


Rendered = Callable[[str], tuple[Path, Written]]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    """Each source rendered once for the module: its output directory and the variables it wrote."""
    done: dict[str, tuple[Path, Written]] = {}

    def get(source: str) -> tuple[Path, Written]:
        if source not in done:
            tmp = tmp_path_factory.mktemp("render")
            done[source] = (tmp / "out", render_source(source, tmp))
        return done[source]

    return get


# --- the specs themselves ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("role", ROLES)
def test_every_role_has_a_main_entry_point(role: str) -> None:
    main = entry_point(role)
    assert main.get("short_description") and main.get("description"), (
        f"{role}: meta/argument_specs.yml needs a `main` entry point with short_description and description")
    for name, opt in options(role).items():
        assert opt.get("type") and opt.get("description"), f"{role}: option {name} needs a type and a description"
        assert not (opt.get("required") and "default" in opt), f"{role}: {name} is required and has a default"
        assert "elements" not in opt or opt["type"] == "list", f"{role}: {name} has elements but is not a list"


@pytest.mark.parametrize("role", ROLES)
def test_every_default_is_declared_with_the_same_value(role: str) -> None:
    opts = options(role)
    missing = sorted(set(defaults(role)) - set(opts))
    assert not missing, f"{role}: defaults/main.yml has {missing}, which meta/argument_specs.yml does not declare"
    differ = {name: (opts[name].get("default"), value) for name, value in defaults(role).items()
              if opts[name].get("default") != value}
    assert not differ, f"{role}: argument_specs default differs from defaults/main.yml (spec, defaults): {differ}"


@pytest.mark.parametrize("role", ROLES)
def test_every_variable_a_role_reads_from_outside_is_declared(role: str) -> None:
    """A role reading a variable it does not declare is how a rename goes unnoticed."""
    undeclared = sorted(name for name in reads(role) - set(options(role)) - internal(role)
                        if not ansible_provides(name))
    assert not undeclared, f"{role} reads {undeclared}, which its meta/argument_specs.yml does not declare"


@pytest.mark.parametrize("role", ROLES)
def test_no_declaration_is_dead(role: str) -> None:
    """A declared option the role never mentions documents a variable that does nothing."""
    dead = sorted(set(options(role)) - reads(role) - set(defaults(role)))
    assert not dead, f"{role}: meta/argument_specs.yml declares {dead}, which the role never reads"


# --- renders against the specs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("source", SOURCES)
def test_every_rendered_variable_is_declared_by_a_role(source: str, rendered: Rendered) -> None:
    _, written = rendered(source)
    facts = not_role_inputs()
    undeclared = {name: sorted(where) for name, where in written.items()
                  if name not in facts and not declared_by(name)}
    assert not undeclared, (
        f"{source} writes variables no role's meta/argument_specs.yml declares (remove them from the renderer, "
        f"declare them in the role that reads them, or, read by no role, in clusterforge/render/facts.yaml): "
        f"{undeclared}")


def _type_problem(value: Any, opt: dict[str, Any]) -> str | None:
    """Stricter than Ansible, which turns 22.10 into '22.1' for a str: render must write the declared type."""
    expected = {"str": str, "int": int, "bool": bool, "list": list, "dict": dict}.get(opt["type"])
    if value is None or expected is None:
        return None
    if isinstance(value, expected) and not (expected is int and isinstance(value, bool)):
        return None
    return f"{value!r} is a {type(value).__name__}, declared {opt['type']}"


@pytest.mark.parametrize("source", SOURCES)
def test_rendered_values_have_the_declared_types(source: str, rendered: Rendered) -> None:
    problems = []
    for name, where in sorted(rendered(source)[1].items()):
        for role in declared_by(name):
            opt = options(role)[name]
            for place, values in where.items():
                # Ansible templates a value before validating it: a template is checked as what it renders to
                for value in (v for v in values if not (isinstance(v, str) and "{{" in v)):
                    problem = _type_problem(value, opt)
                    errors = ArgumentSpecValidator({name: opt}).validate({name: value}).error_messages
                    problems += [f"{name} in {place} for {role}: {p}" for p in [problem, *errors] if p]
    assert not problems, f"{source}:\n" + "\n".join(problems)


def test_inventory_facts_are_written_and_declared_by_no_role(rendered: Rendered) -> None:
    facts = not_role_inputs()
    written = {name for source in SOURCES for name in rendered(source)[1]}
    assert not sorted(set(facts) - written), f"declared as facts, but no render writes them: {set(facts) - written}"
    declared = {name: declared_by(name) for name in facts if declared_by(name)}
    assert not declared, f"a role declares (so reads) these; they are role inputs, not facts: {declared}"
    undescribed = sorted(name for name, description in facts.items() if not description.strip())
    assert not undescribed, f"facts without a description of what they are: {undescribed}"


# --- Ansible's own validation --------------------------------------------------------------------------------------

def _ansible_env(tmp: Path) -> dict[str, str]:
    home = tmp / "ansible-home"
    return {**os.environ, "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
            "ANSIBLE_REMOTE_TEMP": str(home / "remote"), "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(ROOT / "roles"), "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(home / "facts"),
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0"}


@pytest.mark.parametrize(("source", "host"), [("examples/onprem-dgx-h100", "gpu-0002"),
                                              ("render --from-stack", "controller-0001"), ("lab", "node-0001"),
                                              ("templates/amd-mi300x-roce", "gpu-0001")])
def test_ansible_accepts_a_rendered_inventory_in_every_role(source: str, host: str, tmp_path: Path,
                                                            rendered: Rendered) -> None:
    """site.yml on this machine with only the `always` tags, in check mode: the facts, each role's validation
    against its argument specs, and the steps that end a role early. Nothing else runs."""
    out, _ = rendered(source)
    extra: dict[str, Any] = {"ansible_become": False, "ansible_connection": "local",
                             "ansible_python_interpreter": sys.executable}
    args = [str(BIN / "ansible-playbook"), "-i", str(out / "inventory" / "hosts.yml"), str(ROOT / "site.yml"),
            "--tags", "always", "--check", "--limit", host]
    if source == "lab":
        lab_file = tmp_path / "lab-vars.json"
        lab_file.write_text(json.dumps(lab_extra_vars(tmp_path)))
        args += ["-e", f"@{lab_file}"]
    result = subprocess.run([*args, "-e", json.dumps(extra)], capture_output=True, text=True, check=False,
                            env=_ansible_env(tmp_path), cwd=tmp_path)
    failures = [line for line in result.stdout.splitlines() if line.startswith("fatal:")]
    assert result.returncode == 0, "\n".join(failures) + "\n" + result.stdout[-4000:] + result.stderr[-2000:]
    validated = re.findall(r"TASK \[(\w+) : Validating arguments against arg spec 'main'", result.stdout)
    assert sorted(validated) == SITE_ROLES, result.stdout[-6000:]


# --- the README tables -------------------------------------------------------------------------------------------

DOCS_BEGIN = ("<!-- variables: generated from meta/argument_specs.yml; after a change run "
              "CLUSTERFORGE_UPDATE_ROLE_DOCS=1 .venv/bin/python -m pytest tests/test_role_contract.py -->")
DOCS_END = "<!-- end of the generated variables -->"
_LONGEST_DEFAULT = 80


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default_cell(role: str, name: str, opt: dict[str, Any]) -> str:
    if "default" not in opt:
        return "unset"
    value = opt["default"]
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list | dict):
        text = yaml.safe_dump(value, default_flow_style=True, width=1_000_000).strip()
    else:
        text = str(value) if value != "" else '""'
    if len(text) > _LONGEST_DEFAULT and name in defaults(role):
        return "see `defaults/main.yml`"
    return f"`{_cell(text)}`"


def _table(role: str, opts: dict[str, dict[str, Any]]) -> list[str]:
    rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    for name, opt in opts.items():
        kind = f"{opt['type']} of {opt['elements']}" if opt.get("elements") else opt["type"]
        description = opt["description"] if isinstance(opt["description"], str) else " ".join(opt["description"])
        if opt.get("choices"):
            description += " One of " + ", ".join(f"`{choice}`" for choice in opt["choices"]) + "."
        rows.append(f"| `{name}` | {kind} | {_default_cell(role, name, opt)} | {_cell(description)} |")
    return rows


def variables_section(role: str) -> str:
    """The README's variable tables: the role's own variables, then those it reads from outside it."""
    opts = options(role)
    own = {name: opt for name, opt in opts.items() if name.startswith(f"{role}_")}
    outside = {name: opt for name, opt in opts.items() if name not in own}
    lines = [DOCS_BEGIN, "", *_table(role, own)]
    if outside:
        lines += ["", "Read from outside the role (set by `clusterforge render`, site.yml or the inventory):", "",
                  *_table(role, outside)]
    return "\n".join([*lines, "", DOCS_END]) + "\n"


def _with_section(text: str, section: str) -> str:
    """The README with its generated section (or, the first time, its hand-written variable table) replaced."""
    if DOCS_BEGIN in text and DOCS_END in text:
        end = text.index(DOCS_END) + len(DOCS_END) + 1
        return text[:text.index(DOCS_BEGIN)] + section + text[end:]
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith("| variable |"))
    last = next((i for i in range(first, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "".join(lines[:first]) + section + "".join(lines[last:])


@pytest.mark.parametrize("role", ROLES)
def test_readme_variables_are_the_argument_specs(role: str) -> None:
    path = ROOT / "roles" / role / "README.md"
    text = path.read_text()
    if UPDATE_DOCS:
        text = _with_section(text, variables_section(role))
        path.write_text(text)
    assert DOCS_BEGIN in text and DOCS_END in text, (
        f"{path}: no generated variable tables (CLUSTERFORGE_UPDATE_ROLE_DOCS=1 to write them)")
    current = text[text.index(DOCS_BEGIN):text.index(DOCS_END) + len(DOCS_END)] + "\n"
    listed = re.findall(r"^\| `([^`]+)` \|", current, flags=re.MULTILINE)
    assert sorted(listed) == sorted(options(role)), (
        f"{path} lists {sorted(set(listed) - set(options(role)))} that meta/argument_specs.yml does not declare "
        f"and lacks {sorted(set(options(role)) - set(listed))} (CLUSTERFORGE_UPDATE_ROLE_DOCS=1 to regenerate)")
    assert current == variables_section(role), (
        f"{path}: the variable tables differ from meta/argument_specs.yml (defaults or meanings); "
        "CLUSTERFORGE_UPDATE_ROLE_DOCS=1 to regenerate")
