"""Every setting `clusterforge render` writes is declared once, with what a day-two change of it takes.

A role binds the variables it reads in its meta/clusterforge.yml, clusterforge/render/facts.yaml declares the facts
no role reads, an accelerator vendor its pin vars, a target its own keys (clusterforge/render/change_classes.py looks
a key up in them). Each example, team template, the lab and the stack inventories are rendered (the sources of
tests/test_role_contract.py), and every key of their group_vars/*.yml and hosts.yml (cluster-wide, pool and host
vars) must have exactly one declaration of the kind it is written as; every declaration must be of a key some
render writes or a role default; and a role binds only what it declares, a variable named after a role only there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clusterforge import accelerator_kernel as accelerators
from clusterforge.core.errors import ClusterforgeError
from clusterforge.files.checkout import project_root
from clusterforge.render import change_classes as effects
from clusterforge.render.declarations import HOSTS, Declared, facts, read_bindings
from clusterforge.target_kernel import registered, stage_value
from tests.conftest import ROOT
from tests.test_role_contract import ROLES, SOURCES, Written, defaults, options, render_source


def kinds(where: dict[str, list[Any]]) -> set[str]:
    """How a key is written: `group` (group_vars/*.yml, hosts.yml's `all` vars), `host` (hosts.yml's pool groups and
    hosts, host_vars/*.yml); the lab's extra vars are neither (no render file holds them)."""
    found = set()
    for place in where:
        if place.startswith("inventory/group_vars/") or place == "inventory/hosts.yml (all vars)":
            found.add("group")
        elif place.startswith(("inventory/hosts.yml", "inventory/host_vars/")):
            found.add("host")
    return found


def declaration_problems(written: Written) -> list[str]:
    """What is wrong with the declarations of the keys of one render: none, several, or not of the kind written."""
    problems = []
    for key, where in sorted(written.items()):
        needed = kinds(where)
        if not needed:
            continue
        found: tuple[Declared, ...] = effects.declarations_of(key)
        if not found:
            problems.append(f"{key} ({', '.join(sorted(where))}): declared nowhere; bind it in the "
                            "meta/clusterforge.yml of the role that reads it, or declare it in "
                            "clusterforge/render/facts.yaml")
        elif len(found) > 1:
            problems.append(f"{key}: declared {len(found)} times: {', '.join(d.where for d in found)}")
        else:
            missing = sorted(kind for kind in needed if getattr(found[0], kind) is None)
            if missing:
                problems.append(f"{key}: written as a {' and '.join(missing)} var, but {found[0].where} has no "
                                f"`{missing[0]}:` effect for it")
    return problems


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Written]:
    return {source: render_source(source, tmp_path_factory.mktemp("render")) for source in SOURCES}


@pytest.mark.parametrize("source", SOURCES)
def test_every_rendered_key_has_exactly_one_declaration(source: str, renders: dict[str, Written]) -> None:
    problems = declaration_problems(renders[source])
    assert not problems, f"{source}:\n" + "\n".join(problems)


def declared_keys() -> dict[str, str]:
    """Every key declared anywhere, with where."""
    root = project_root()
    found = {key: d.where for key, d in read_bindings(root).settings.items()}
    found |= {key: d.where for key, d in facts().items()}
    found |= {pin.var: f"accelerator {vendor.name}" for vendor in accelerators.registered().values()
              for pin in vendor.pin_vars}
    for name, target in registered().items():
        table = stage_value(target, "day2", "EFFECTS", effects.TargetEffects)
        if table is not None:
            found |= {key: f"target {name}" for key in [*table.group_vars, *table.host_vars]}
    return found


def test_no_declaration_is_dead(renders: dict[str, Written]) -> None:
    """A declaration of a key nothing writes is a rename done on one side only."""
    written = {key for found in renders.values() for key in found}
    role_defaults = {name for role in ROLES for name, opt in options(role).items()
                     if "default" in opt or name in defaults(role)}
    dead = {key: where for key, where in declared_keys().items() if key not in written | role_defaults}
    assert not dead, f"declared, but no render writes them and no role has them as a default: {dead}"


def test_a_role_binds_only_its_own_variables() -> None:
    """A binding is of a variable its role declares (meta/argument_specs.yml); a variable named after a role that
    reads it (`efa_installer_version`) is bound by that role."""
    problems = []
    for key, declared in read_bindings(project_root()).settings.items():
        role = declared.where.split("/")[1]
        if key not in options(role):
            problems.append(f"{declared.where}: {key} is not in roles/{role}/meta/argument_specs.yml")
        owner = next((r for r in ROLES if key.startswith(f"{r}_") and key in options(r)), None)
        if owner is not None and owner != role:
            problems.append(f"{declared.where}: {key} is roles/{owner}'s: bind it there")
    assert not problems, "\n".join(problems)


def test_every_handler_a_rendered_file_notifies_is_declared() -> None:
    role = effects.slurm_role()
    named = {handler for handlers in role.notify.values() for handler in handlers}
    assert sorted(named - set(role.handlers)) == [], "roles/slurm/meta/clusterforge.yml: handlers lacks these"
    handlers = (ROOT / "roles" / "slurm" / "handlers" / "main.yml").read_text()
    unknown = sorted(name for name in role.handlers if f"- name: {name}" not in handlers)
    assert not unknown, f"roles/slurm/meta/clusterforge.yml declares handlers the role does not have: {unknown}"


# --- the loader's checks ---------------------------------------------------------------------------------------

def _checkout(tmp_path: Path, binding: str) -> Path:
    root = tmp_path / "checkout"
    (root / "roles" / "demo" / "meta").mkdir(parents=True)
    (root / "site.yml").write_text("---\n")
    (root / "roles" / "demo" / "meta" / "clusterforge.yml").write_text(binding)
    return root


@pytest.mark.parametrize(("binding", "message"), [
    ("settings:\n  demo_x:\n    group: {action: wipe, hosts: all, why: w}\n",
     "roles/demo/meta/clusterforge.yml: demo_x.group: action 'wipe' is none of none, reconfigure"),
    ("settings:\n  demo_x:\n    host: {action: none, hosts: racks, why: w}\n",
     "roles/demo/meta/clusterforge.yml: demo_x.host: hosts 'racks' is none of " + ", ".join(HOSTS)),
    ("settings:\n  demo_x:\n    group: {action: none, hosts: changed, why: w}\n",
     "demo_x.group: hosts 'changed' names the hosts whose own value changed"),
    ("settings:\n  demo_x:\n    group: {action: none, hosts: all}\n", "demo_x.group: why: the sentence"),
    ("settings:\n  demo_x:\n    groups: {action: none, hosts: all, why: w}\n", "demo_x: declares group and/or host"),
    ("settings:\n  demo_x:\n    group: [{action: none, hosts: all, why: w, when: x}]\n",
     "demo_x.group[0]: unknown field(s) when"),
    ("setting: {}\n", "unknown section(s) setting"),
    ("settings: [demo_x]\n", "settings: is not a mapping by name"),
])
def test_a_bad_binding_is_an_error_naming_file_and_key(tmp_path: Path, binding: str, message: str) -> None:
    with pytest.raises(ClusterforgeError) as caught:
        read_bindings(_checkout(tmp_path, binding))
    [problem] = caught.value.problems
    assert message in problem.render()


def test_a_variable_bound_by_two_roles_is_an_error(tmp_path: Path) -> None:
    root = _checkout(tmp_path, "settings:\n  x_y:\n    group: {action: none, hosts: all, why: w}\n")
    (root / "roles" / "other" / "meta").mkdir(parents=True)
    (root / "roles" / "other" / "meta" / "clusterforge.yml").write_text(
        "settings:\n  x_y:\n    group: {action: none, hosts: all, why: w}\n")
    with pytest.raises(ClusterforgeError) as caught:
        read_bindings(root)
    [problem] = caught.value.problems
    assert problem.render().endswith("roles/other/meta/clusterforge.yml: x_y: x_y is bound in "
                                     "roles/demo/meta/clusterforge.yml as well: bind it in one role")
