"""docs/contributing.md's role-variable recipe, performed: its argument spec and its binding, added to a copy of
the checkout's roles (`CLUSTERFORGE_ANSIBLE_DIR` points day two at it), are what `clusterforge diff` says a change
of the variable takes; the same copy without the binding fails tests/test_setting_declarations.py's check, and
the diff treats the variable as needing idle nodes.

The renderer's edit (step 3) is stood in for by writing the variable into a rendered group_vars/all.yml, as
clusterforge/render/group_vars.py would.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from clusterforge.cli.main import app
from clusterforge.render.change_classes import group_var_effects
from clusterforge.render.change_effects import Action
from tests.test_contributing import EXAMPLE, ROOT
from tests.test_recipe_accelerator import code_block
from tests.test_role_contract import written_in
from tests.test_setting_declarations import declaration_problems

HEADING = "Add a role variable"


def recipe() -> tuple[str, dict[str, Any], str]:
    """The recipe's variable: its name, its argument spec, and its binding as the YAML text the doc shows."""
    spec = yaml.safe_load(textwrap.dedent(code_block(HEADING, "yaml")))
    [name] = spec
    section = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8").split(f"## {HEADING}\n", 1)[1]
    binding = textwrap.dedent(section.split("```yaml\n", 2)[2].split("```", 1)[0])
    assert list(yaml.safe_load(binding)) == [name], "the binding block binds the variable the spec declares"
    return name, spec[name], binding


def checkout(tmp_path: Path, bound: bool) -> Path:
    """A copy of the checkout's roles and site.yml with the recipe's variable declared in its role, and bound there
    when `bound`."""
    name, spec, binding = recipe()
    role = next(path.name for path in (ROOT / "roles").iterdir() if name.startswith(f"{path.name}_"))
    root = tmp_path / ("bound" if bound else "unbound")
    shutil.copytree(ROOT / "roles", root / "roles")
    shutil.copy(ROOT / "site.yml", root / "site.yml")
    meta = root / "roles" / role / "meta"
    specs = yaml.safe_load((meta / "argument_specs.yml").read_text())
    specs["argument_specs"]["main"]["options"][name] = spec
    (meta / "argument_specs.yml").write_text(yaml.safe_dump(specs, sort_keys=False))
    with (root / "roles" / role / "defaults" / "main.yml").open("a") as defaults:
        defaults.write(yaml.safe_dump({name: spec["default"]}))
    if bound:
        with (meta / "clusterforge.yml").open("a") as binding_file:  # `settings:` is the file's last section
            binding_file.write(textwrap.indent(binding, "  "))
        assert name in yaml.safe_load((meta / "clusterforge.yml").read_text())["settings"]
    return root


def renders(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The example rendered twice with the renderer writing the variable, at 10 and then at 20, each render with
    its manifest (the variable classed as the checkout in CLUSTERFORGE_ANSIBLE_DIR declares it)."""
    from clusterforge.render import group_vars

    written = group_vars.group_vars
    outs = []
    for value in (10, 20):
        monkeypatch.setattr(group_vars, "group_vars", lambda ctx, v=value: written(ctx) | {name: v})
        out = tmp_path / f"render-{value}"
        result = CliRunner().invoke(app, ["render", str(EXAMPLE), "-o", str(out)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert f"{name}: {value}\n" in (out / "inventory" / "group_vars" / "all.yml").read_text()
        outs.append(out)
    monkeypatch.setattr(group_vars, "group_vars", written)
    return outs[0], outs[1]


def diff(old: Path, new: Path) -> tuple[int, list[dict[str, Any]]]:
    result = CliRunner().invoke(app, ["diff", str(old), str(new), "--format", "json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.output)["changes"]


def test_the_binding_is_what_a_change_of_the_new_variable_takes(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    name, _, binding = recipe()
    declared = yaml.safe_load(binding)[name]["group"]
    monkeypatch.setenv("CLUSTERFORGE_ANSIBLE_DIR", str(checkout(tmp_path, bound=True)))
    old, new = renders(tmp_path, name, monkeypatch)
    [effect] = group_var_effects(name)
    assert (effect.action, effect.hosts, effect.why) == (Action[declared["action"].upper()], declared["hosts"],
                                                         declared["why"])
    code, changes = diff(old, new)
    assert [(c["key"], c["old"], c["new"], c["action"], c["why"]) for c in changes] == [
        (name, "10", "20", declared["action"].upper(), declared["why"])]
    assert code == 0  # the binding says running jobs are not touched
    assert declaration_problems(written_in(new)) == []


def test_without_the_binding_the_variable_fails_the_declaration_check(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    name, _, _ = recipe()
    monkeypatch.setenv("CLUSTERFORGE_ANSIBLE_DIR", str(checkout(tmp_path, bound=False)))
    old, new = renders(tmp_path, name, monkeypatch)
    [problem] = declaration_problems(written_in(new))
    assert problem.startswith(f"{name} (inventory/group_vars/all.yml): declared nowhere")
    code, changes = diff(old, new)
    assert [(c["key"], c["action"]) for c in changes] == [(name, "DRAIN")]  # not classified: idle nodes
    assert code == 1
