"""A Site file given to `validate`, `plan`, `render` or `report`: one short answer (it is a Site, these blueprints
include it, run this instead), exit 2, instead of the Cluster model's ten complaints about its keys."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES, line_of

SHARED = EXAMPLES / "shared-site"
SITE = SHARED / "site-dc1.yaml"
COMMANDS = {"validate": [], "plan": [], "render": ["-o", "out"], "report": ["-o", "report.html"]}


def _run(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_site_file_is_named_a_site_with_the_blueprints_that_include_it(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _run(command, SITE, *COMMANDS[command])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert 1 <= len(lines) <= 3, result.stderr
    kind_line = line_of(SITE, "kind: Site")
    assert lines[0].startswith(f"{SITE}:{kind_line}: kind: a Site file, not a Cluster blueprint: included by "
                               f"{SHARED / 'team-nlp.yaml'}, {SHARED / 'team-vision.yaml'}"), lines
    assert f"`clusterforge check {SITE}`" in result.stderr
    assert f"`clusterforge {command} {SHARED / 'team-nlp.yaml'}" in result.stderr
    assert "unknown key" not in result.stderr and "missing required key" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # render and report wrote nothing


def test_validate_names_every_blueprint_to_validate_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SHARED)
    result = _run("validate", "site-dc1.yaml")
    assert "`clusterforge validate team-nlp.yaml team-vision.yaml`" in result.stderr, result.stderr
    assert result.stdout == ""


def test_validate_json_holds_the_one_problem() -> None:
    result = _run("validate", "-f", "json", SITE, SHARED / "team-nlp.yaml")
    assert result.exit_code == 2, result.output
    data = json.loads(result.stdout)
    site, team = data["files"]
    assert [e["path"] for e in site["errors"]] == ["kind"] and "a Site file" in site["errors"][0]["message"]
    assert team["ok"] and team["cluster"]["name"] == "nlp"


def test_a_site_no_blueprint_includes_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(SITE, tmp_path / "site-dc1.yaml")
    monkeypatch.chdir(tmp_path)
    result = _run("plan", "site-dc1.yaml")
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "a Site file, not a Cluster blueprint, and no blueprint includes it (looked in ./ and below)" in line
    assert "`site: !include site-dc1.yaml`" in line


def test_blueprints_are_found_where_check_finds_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blueprint in a folder above the site's (between it and the working directory) includes it, as check
    looks there; so does one given on the same command line outside the site's tree."""
    (tmp_path / "sites").mkdir()
    shutil.copy(SITE, tmp_path / "sites" / "dc1.yaml")
    team = (SHARED / "team-nlp.yaml").read_text().replace("!include site-dc1.yaml", "!include sites/dc1.yaml")
    (tmp_path / "team.yaml").write_text(team)
    monkeypatch.chdir(tmp_path)
    result = _run("validate", "sites/dc1.yaml")
    assert "included by team.yaml (run `clusterforge validate team.yaml`" in result.stderr, result.stderr
    checked = _run("check", "sites/dc1.yaml")
    assert "checked team.yaml that include it" in checked.stderr, checked.stderr


def test_a_site_shared_by_many_names_a_few(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(SITE, tmp_path / "site-dc1.yaml")
    team = (SHARED / "team-nlp.yaml").read_text()
    for n in range(8):
        (tmp_path / f"team-{n}.yaml").write_text(team.replace("name: nlp", f"name: t{n}"))
    monkeypatch.chdir(tmp_path)
    result = _run("validate", "site-dc1.yaml")
    [line] = result.stderr.splitlines()
    assert "included by team-0.yaml, team-1.yaml, team-2.yaml, team-3.yaml, team-4.yaml and 3 more" in line


def test_a_cluster_is_still_validated() -> None:
    result = _run("validate", SHARED / "team-nlp.yaml")
    assert result.exit_code == 0, result.output
    assert "valid (nlp" in result.stdout
