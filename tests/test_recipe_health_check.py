"""docs/contributing.md's health check recipe, performed: the check file and the codes.yml row it shows, added to a
copy of the health check's folder, are all the script needs to run the check: a clock out of sync fails it and
drains the node with the new code, one in sync passes. The table test takes the row, and without it names the
code. The files the recipe touches are counted."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.test_contributing import DOC
from tests.test_health_checks import NODE, SCRIPT, Node
from tests.test_health_codes import health_sources, script_problems, table

HEADING = "Add a health check"


def blocks(language: str) -> list[str]:
    section = DOC.read_text(encoding="utf-8").split(f"## {HEADING}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def with_the_check(tmp_path: Path) -> tuple[Path, dict[str, dict[str, object]]]:
    """A copy of the script's folder of checks with the recipe's file added, and codes.yml with its row."""
    [check] = blocks("bash")
    [row] = blocks("yaml")
    folder = tmp_path / "clusterforge-health.d"
    shutil.copytree(SCRIPT.parent / "clusterforge-health.d", folder)
    (folder / "75-clock-sync.sh").write_text(check)
    added = yaml.safe_load("codes:\n" + row)["codes"][0]
    return folder, {**table(), added["code"]: added}


def clock(tmp_path: Path, synchronized: str) -> Path:
    """A stand-in timedatectl that answers NTPSynchronized."""
    folder = tmp_path / "clock-bin"
    folder.mkdir(exist_ok=True)
    stand_in = folder / "timedatectl"
    stand_in.write_text(f"#!/bin/sh\necho {synchronized}\n")
    stand_in.chmod(0o755)
    return folder


def test_the_clock_check_runs_from_its_file_and_drains_with_its_code(tmp_path: Path) -> None:
    folder, _ = with_the_check(tmp_path)
    node = Node(tmp_path).set(CHECK_GPUS=0, CHECK_XID=0, CHECK_ECC=0, CHECK_REMAP=0, CHECK_CLOCK_SYNC=1,
                              CHECKS_DIR=folder)
    out_of_sync = node.run(extra_path=clock(tmp_path, "no"))
    detail = "the clock is not synchronized (timedatectl: NTPSynchronized=no)"
    assert out_of_sync.returncode == 1, out_of_sync.stdout + out_of_sync.stderr
    assert f"FAIL clock-sync (person): {detail}" in out_of_sync.stdout.splitlines()
    assert node.drains() == [f"clusterforge-health: clock-sync (person): {detail}"]
    assert 'clusterforge_health_failure{code="clock-sync",action="person"} 1' in node.prom_file()
    (tmp_path / "calls.scontrol").unlink()
    in_sync = node.run("--check", extra_path=clock(tmp_path, "yes"))
    assert in_sync.returncode == 0 and "ok   clock-sync: the clock is synchronized" in in_sync.stdout
    assert not node.drains() and NODE


@pytest.mark.skipif(not shutil.which("shellcheck") and not os.environ.get("CI"),
                    reason="shellcheck is not installed (CI installs it, and runs this)")
def test_the_recipes_check_passes_shellcheck(tmp_path: Path) -> None:
    folder, _ = with_the_check(tmp_path)
    result = subprocess.run(["shellcheck", str(folder / "75-clock-sync.sh")], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout


def test_the_check_is_off_without_its_flag(tmp_path: Path) -> None:
    folder, _ = with_the_check(tmp_path)
    node = Node(tmp_path).set(CHECK_GPUS=0, CHECK_XID=0, CHECK_ECC=0, CHECK_REMAP=0, CHECKS_DIR=folder)
    result = node.run("--check", extra_path=clock(tmp_path, "no"))
    assert result.returncode == 0 and "clock-sync" not in result.stdout


def test_a_script_without_its_checks_fails_instead_of_passing(tmp_path: Path) -> None:
    empty = tmp_path / "no-checks"
    empty.mkdir()
    result = Node(tmp_path).set(CHECKS_DIR=empty).run("--check")
    assert result.returncode == 2 and f"no checks in {empty}" in result.stderr


def test_the_table_takes_the_row_and_without_it_names_the_code(tmp_path: Path) -> None:
    folder, codes = with_the_check(tmp_path)
    text = health_sources() + "\n" + (folder / "75-clock-sync.sh").read_text()
    assert script_problems(codes, text) == []
    assert script_problems(table(), text) == [
        "the script fails clock-sync (person), which codes.yml does not list"]


def test_the_recipe_counts_its_files() -> None:
    """A check on an existing flag: its file, its row, the two docs tables (4); with a flag of its own, the
    template, the default and the argument spec too (7)."""
    section = " ".join(DOC.read_text(encoding="utf-8").split(f"## {HEADING}\n", 1)[1].split("\n## ", 1)[0].split())
    assert "4 files for a check on an existing flag" in section and "(7 files)" in section
    named = set(re.findall(r"`((?:roles/health/|docs/|templates/|defaults/|meta/)[\w./-]+)`", section))
    assert {"roles/health/codes.yml", "roles/health/README.md", "docs/operations.md",
            "templates/health.conf.j2", "defaults/main.yml", "meta/argument_specs.yml"} <= named
