"""The roles' style rules (DESIGN.md), checked on the files: prefixes, documented defaults, tables of contents."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.render.slurm_conf import HEALTH_CHECK_PROGRAM
from tests.conftest import ROOT

ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())
TOC_KEYS = {"ansible.builtin.import_tasks", "ansible.builtin.include_tasks", "ansible.builtin.meta"}


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) if path.is_file() else None


def tasks_of(role: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((ROOT / "roles" / role).glob("*/*.yml")):
        if path.parent.name in ("tasks", "handlers"):
            for task in load(path) or []:
                out.append((f"{path.parent.name}/{path.name}", task))
                out += [(f"{path.parent.name}/{path.name}", t) for t in task.get("block", [])]
    return out


def test_every_role_of_the_issue_exists() -> None:
    assert set(ROLES) == {"common", "munge", "slurm", "nvidia_driver", "nccl", "efa", "infiniband",
                          "lustre_client", "health"}


@pytest.mark.parametrize("role", ROLES)
def test_defaults_are_prefixed_and_documented(role: str) -> None:
    defaults = load(ROOT / "roles" / role / "defaults" / "main.yml") or {}
    readme = (ROOT / "roles" / role / "README.md").read_text()
    assert defaults, f"{role} has no defaults"
    for name in defaults:
        assert name.startswith(f"{role}_"), f"{role}: default {name} lacks the role prefix"
        assert f"`{name}`" in readme, f"{role}: default {name} is not in the README"


@pytest.mark.parametrize("role", ROLES)
def test_role_variables_are_prefixed(role: str) -> None:
    names = set((load(ROOT / "roles" / role / "vars" / "main.yml") or {}).keys())
    for _, task in tasks_of(role):
        if "register" in task:
            names.add(task["register"])
        facts = task.get("ansible.builtin.set_fact") or {}
        names |= {k for k in facts if k != "cacheable"}
    bad = sorted(n for n in names if not n.startswith(f"{role}_"))
    assert not bad, f"{role}: variables without the role prefix: {bad}"


@pytest.mark.parametrize("role", ROLES)
def test_main_is_a_table_of_contents(role: str) -> None:
    for entry in load(ROOT / "roles" / role / "tasks" / "main.yml"):
        modules = set(entry) & (TOC_KEYS | {k for k in entry if "." in k})
        assert modules <= TOC_KEYS, f"{role}: tasks/main.yml runs {modules}; move it into a task file"


@pytest.mark.parametrize("role", ROLES)
def test_tasks_are_named_and_handlers_lowercase(role: str) -> None:
    for where, task in tasks_of(role):
        assert task.get("name"), f"{role}/{where}: a task without a name"
        if where.startswith("handlers/"):
            assert task["name"] == task["name"].lower(), f"{role}: handler {task['name']!r} is not lowercase"
        else:
            assert task["name"][0].isupper(), f"{role}/{where}: {task['name']!r} does not start uppercase"


@pytest.mark.parametrize("role", ROLES)
def test_secrets_never_logged(role: str) -> None:
    for where, task in tasks_of(role):
        text = yaml.safe_dump(task)
        if re.search(r"munge_key(?!_path|_stat)", text):
            assert task.get("no_log") is True, f"{role}/{where}: {task['name']!r} touches the munge key without no_log"


def test_health_script_is_the_rendered_health_check_program() -> None:
    defaults = load(ROOT / "roles" / "health" / "defaults" / "main.yml")
    assert defaults["health_script"] == HEALTH_CHECK_PROGRAM


def test_lab_variables_are_role_defaults() -> None:
    """A misspelt lab override would silently do nothing: each must be a default of some role."""
    from clusterforge.lab.labvars import lab_vars
    from clusterforge.lab.paths import LabPaths
    from clusterforge.lab.repo import Repo

    known: set[str] = set()
    for role in ROLES:
        known |= set(load(ROOT / "roles" / role / "defaults" / "main.yml") or {})
    overrides = lab_vars(LabPaths("t", Path("/tmp/t")), Repo(Path("/r"), "efa.tar.gz", "0" * 64))
    unknown = sorted(k for k in overrides if not k.startswith("ansible_") and k not in known)
    assert not unknown, f"lab variables no role defines: {unknown}"


def munge_key_script() -> list[str]:
    """The argv of the task that makes the control host's munge key."""
    return next(task["ansible.builtin.command"]["argv"] for _, task in tasks_of("munge")
                if task.get("name") == "The control host has a complete munge key")


@pytest.mark.parametrize("before", [None, b"short", b"x" * 1025])
def test_munge_key_is_made_whole_or_not_at_all(tmp_path: Path, before: bytes | None) -> None:
    """A missing key, or the short key of an interrupted run, is replaced by a complete one in one rename."""
    import subprocess

    key = tmp_path / "munge.key"
    if before is not None:
        key.write_bytes(before)
    argv = [a if "{{" not in a else {"{{ munge_key_file }}": str(key)}.get(a, "1024") for a in munge_key_script()]
    subprocess.run(argv, check=True)
    assert key.stat().st_size == 1024 and key.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["munge.key"]  # no temporary file left behind
    # a failed size check (here: asking for more than /dev/urandom's head gives when cut) leaves the key alone
    broken = [a.replace('head -c "$2"', 'head -c 10') for a in argv]
    assert subprocess.run(broken, check=False).returncode != 0
    assert key.stat().st_size == 1024 and [p.name for p in tmp_path.iterdir()] == ["munge.key"]


def test_munge_key_of_the_wrong_size_is_made_again() -> None:
    task = next(t for _, t in tasks_of("munge") if t.get("name") == "The control host has a complete munge key")
    assert "munge_key_file_stat.stat.size == munge_key_size" in task["when"]
    assert task["no_log"] is True
    verify = {t["name"]: t for _, t in tasks_of("munge")}
    assert verify["This host makes a munge credential"]["no_log"] is True
