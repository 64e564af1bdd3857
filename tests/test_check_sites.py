"""`check` on what a repository holds: a Site file stands for the blueprints that include it, a folder for the
blueprints below it, `-` for one blueprint on stdin; so the shipped hook and workflow pass on the examples and a
change to a site re-checks every team on it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES, ROOT

SHARED = EXAMPLES / "shared-site"




def test_a_site_file_checks_the_teams_that_include_it(cli) -> None:
    result = cli("check", SHARED / "site-dc1.yaml")
    assert result.exit_code == 0, result.output
    assert "site-dc1.yaml is a Site: checked team-nlp.yaml, team-vision.yaml that include it" in result.stderr
    assert "facility rules check their combined load" in result.stderr


def test_a_blueprint_named_directly_and_through_its_site_is_checked_once(cli) -> None:
    result = cli("check", SHARED / "site-dc1.yaml", SHARED / "team-nlp.yaml", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    warnings = [f for f in data["findings"] if f["level"] == "warning"]
    assert len(warnings) == len({(f["id"], f["file"], f["line"], f["path"]) for f in warnings})
    alone = json.loads(cli("check", SHARED / "team-nlp.yaml", SHARED / "team-vision.yaml", "-f", "json").stdout)
    assert data["findings"] == alone["findings"]


def test_a_site_nobody_includes_is_nothing_to_judge(cli, tmp_path: Path) -> None:
    shutil.copy(SHARED / "site-dc1.yaml", tmp_path / "site-dc1.yaml")
    result = cli("check", tmp_path / "site-dc1.yaml")
    assert result.exit_code == 0, result.output
    assert "no blueprint includes it" in result.stderr and "nothing to judge" in result.stderr
    assert "site: !include site-dc1.yaml" in result.stderr


def test_a_site_change_that_breaks_one_team_fails_at_the_siteline_of(cli, hall: Path) -> None:
    """Racks a03-a04 (only the NLP team's 2 DGX H100 in a03, 20.4 kW) get 415 V 3φ 16 A feeds: 11.5 kW, 9.2 kW
    continuous, too small for the rack on either side; a01-a02 (the vision team) keep their 60 A feeds."""
    site = hall / "site-dc1.yaml"
    text = site.read_text()
    rack = text[text.index('      - name: "a[01-04]"'):]
    small = rack.replace('"a[01-04]"', '"a[03-04]"').replace("amps: 60", "amps: 16")
    site.write_text(text.replace(rack, rack.replace('"a[01-04]"', '"a[01-02]"') + small))
    result = cli("check", site, "-f", "json")
    assert result.exit_code == 1, result.output
    errors = [f for f in json.loads(result.stdout)["findings"] if f["level"] == "error"]
    assert errors and all("a03" in f["message"] for f in errors), errors
    feeds = [i for i, line in enumerate(site.read_text().splitlines(), 1) if "feeds:" in line]
    # PWR-002 on the rack's `feeds:`, PWR-001 on its first feed: the a03-a04 block, not a01-a02's
    assert {(f["id"], Path(f["file"]).name, f["line"]) for f in errors} == {
        ("PWR-002", "site-dc1.yaml", feeds[1]), ("PWR-001", "site-dc1.yaml", feeds[1] + 1)}
    assert "checked team-nlp.yaml, team-vision.yaml that include it" in result.stderr


def test_a_folder_checks_every_blueprint_below_it(cli, hall: Path) -> None:
    (hall / "notes.yaml").write_text("just: some other yaml\n")
    result = cli("check", hall)
    assert result.exit_code == 0, result.output
    assert "notes.yaml: skipped: not a Cluster or Site" in result.stderr
    assert "facility rules check their combined load" in result.stderr


def test_the_examples_folder_passes(cli) -> None:
    result = cli("check", EXAMPLES)
    assert result.exit_code == 0, result.output


def test_stdin_is_one_blueprint_whose_includes_resolve_here(hall: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(hall)
    text = (hall / "team-nlp.yaml").read_text()
    result = CliRunner().invoke(app, ["check", "-", "-f", "json"], input=text, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"] == "pass"
    broken = text.replace("count: 3, partition", "count: 0, partition")
    bad = CliRunner().invoke(app, ["check", "-"], input=broken, catch_exceptions=False)
    assert bad.exit_code == 2 and "<stdin>:" in bad.stderr


def test_the_pre_commit_hook_passes_on_the_tracked_examples(cli) -> None:
    """What `pre-commit run --all-files` does: the hook's `files` pattern over the tracked files, one run."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    [hook] = [h for h in hooks if h["id"] == "clusterforge-check"]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = [ROOT / f for f in tracked.splitlines() if re.search(hook["files"], f) and f.endswith((".yaml", ".yml"))]
    assert ROOT / "examples" / "shared-site" / "site-dc1.yaml" in files
    result = cli("check", *files)
    assert result.exit_code == 0, result.output


def _site_repo(tmp_path: Path) -> tuple[Path, str]:
    from tests.test_workflows import git

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(SHARED, repo / "blueprints" / "dc1")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo, git(repo, "rev-parse", "HEAD")


def _finder_step() -> dict[str, object]:
    """The PR gate's step that lists the blueprints a change touches (action.yml, id `changed`)."""
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    [finder] = [step for step in steps if step.get("id") == "changed"]
    assert isinstance(finder, dict)
    return finder


def test_a_pr_changing_only_a_site_rechecks_its_teams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workflow's finder lists the two teams that include the changed site; `check` on that list judges
    both."""
    from tests.test_workflows import find, git

    assert _finder_step()["env"]["CLUSTERFORGE_INCLUDE_ROOT"] == "${{ github.workspace }}"  # type: ignore[index]
    repo, base = _site_repo(tmp_path)
    site = repo / "blueprints" / "dc1" / "site-dc1.yaml"
    site.write_text(site.read_text().replace("amps: 60", "amps: 16"))
    git(repo, "commit", "-qam", "smaller feeds")
    listed, _, count = find(repo, base)
    assert sorted(listed) == ["blueprints/dc1/team-nlp.yaml", "blueprints/dc1/team-vision.yaml"]
    assert count == "count=2"
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CLUSTERFORGE_INCLUDE_ROOT", str(repo))
    result = CliRunner().invoke(app, ["check", "-f", "json", "--", *listed], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "shared by blueprints/dc1/team-nlp.yaml, blueprints/dc1/team-vision.yaml" in result.stderr
    assert any(f["id"] == "PWR-002" for f in json.loads(result.stdout)["findings"])


def test_a_pr_deleting_a_site_rechecks_the_teams_that_still_include_it(tmp_path: Path) -> None:
    from tests.test_workflows import find, git

    repo, base = _site_repo(tmp_path)
    git(repo, "rm", "-q", "blueprints/dc1/site-dc1.yaml")
    git(repo, "commit", "-qm", "drop the site")
    listed, _, _ = find(repo, base)
    assert sorted(listed) == ["blueprints/dc1/team-nlp.yaml", "blueprints/dc1/team-vision.yaml"]


def test_an_empty_folder_is_bad_input_that_says_what_was_looked_for(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = cli("check", tmp_path / "empty")
    assert result.exit_code == 2, result.output
    assert (f"{tmp_path / 'empty'}: no blueprint to check: looked for .yaml/.yml files of kind Cluster or Site below "
            "it (hidden folders skipped) and found no YAML file") in result.stderr


def test_a_folder_of_other_yaml_is_bad_input_beside_the_blueprints_judged(cli, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.yaml").write_text("just: some other yaml\n")
    (tmp_path / "notes" / ".hidden").mkdir()
    (tmp_path / "notes" / ".hidden" / "b.yaml").write_text((SHARED / "team-nlp.yaml").read_text())
    result = cli("check", tmp_path / "notes", EXAMPLES / "aws-p5.yaml", "-f", "json")
    assert result.exit_code == 2, result.output
    assert "found 1 YAML file of other kinds" in result.stderr
    data = json.loads(result.stdout)
    [problem] = [f for f in data["findings"] if f["id"] == "INPUT"]
    assert problem["file"].endswith("/notes") and "no blueprint to check" in problem["message"]
    assert data["summary"]["rules"] > 1  # aws-p5 was still judged: its rules ran beside INPUT


def test_a_folder_with_only_a_site_nobody_includes_still_passes(cli, tmp_path: Path) -> None:
    shutil.copy(SHARED / "site-dc1.yaml", tmp_path / "site-dc1.yaml")
    result = cli("check", tmp_path)
    assert result.exit_code == 0, result.output
    assert "no blueprint includes it" in result.stderr
