"""A Site file given to `cost`, `cost --diff` or either side of `diff`: the one short answer `validate` gives (it is
a Site, these blueprints include it, run this instead), exit 2, instead of the Cluster model's ten complaints; and
check's text names a problem of no line by its file alone, never `file:0`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES, line_of

SHARED = EXAMPLES / "shared-site"
SITE = SHARED / "site-dc1.yaml"
NLP = SHARED / "team-nlp.yaml"
VISION = SHARED / "team-vision.yaml"


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a folder of its own: the examples are named by their absolute paths, as given."""
    monkeypatch.chdir(tmp_path)


def _run(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def _one_answer(result: Result) -> list[str]:
    """The lines of a Site file's answer, checked: exit 2, at most 3 lines, none of the model's complaints."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert 1 <= len(lines) <= 3, result.stderr
    assert lines[0].startswith(f"{SITE}:{line_of(SITE, 'kind: Site')}: kind: a Site file, not a Cluster blueprint: "
                               "included by "), lines
    assert str(NLP) in lines[0] and str(VISION) in lines[0], lines
    assert f"`clusterforge check {SITE}`" in result.stderr
    assert "unknown key" not in result.stderr and "missing required key" not in result.stderr
    assert result.stdout == ""
    return lines


def test_cost_of_a_site_file(tmp_path: Path) -> None:
    out = tmp_path / "cost.md"
    [line] = _one_answer(_run("cost", SITE, "-f", "markdown", "-o", out))
    assert f"(run `clusterforge cost {NLP}`" in line
    assert not out.exists()


@pytest.mark.parametrize("command", [["diff"], ["cost", "--diff"]], ids=["diff", "cost --diff"])
@pytest.mark.parametrize("sides", ["old", "new"])
def test_a_site_file_on_either_side(command: list[str], sides: str) -> None:
    pair = [SITE, VISION] if sides == "old" else [VISION, SITE]
    [line] = _one_answer(_run(*command, *pair))
    # the site's place is taken by the first blueprint that includes it (the given one is searched first); the
    # same blueprint on both sides would compare nothing, so OLD becomes that blueprint at a revision
    assert f"(run `clusterforge {' '.join(command)} REV:{VISION} {VISION}`" in line, line


def test_the_same_site_at_a_revision_becomes_the_blueprint_at_that_revision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("site-dc1.yaml", "team-nlp.yaml"):
        shutil.copy(SHARED / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], check=True, capture_output=True)
    result = _run("diff", "HEAD:site-dc1.yaml", "site-dc1.yaml")
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("site-dc1.yaml:") and "included by team-nlp.yaml" in line, line
    assert "(run `clusterforge diff HEAD:team-nlp.yaml team-nlp.yaml`" in line, line
    cost = _run("cost", "--diff", "HEAD:site-dc1.yaml", "site-dc1.yaml")
    assert "(run `clusterforge cost --diff HEAD:team-nlp.yaml team-nlp.yaml`" in cost.stderr, cost.stderr


def test_a_site_file_on_both_sides_is_answered_once() -> None:
    result = _run("diff", SITE, SITE)
    [line] = _one_answer(result)
    assert f"(run `clusterforge diff REV:{NLP} {NLP}`" in line, line


def test_blueprints_and_render_directories_are_still_compared(tmp_path: Path) -> None:
    assert _run("diff", NLP, NLP).exit_code == 0
    assert _run("cost", "--diff", NLP, NLP).exit_code == 0
    assert _run("cost", NLP).exit_code == 0
    assert _run("render", NLP, "-o", tmp_path / "out").exit_code == 0
    result = _run("diff", tmp_path / "out", NLP)
    assert result.exit_code == 0 and "a Site file" not in result.output, result.output


def test_check_text_names_a_lineless_problem_by_its_file_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _run("check", NLP, "missing.yaml")
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.stdout.splitlines() if " INPUT " in line]
    assert "(missing.yaml): no such file" in line and ":0" not in line, line


def test_check_text_of_a_problem_of_no_file_has_no_location(tmp_path: Path) -> None:
    from clusterforge.cli.check_view import emit
    from clusterforge.core.errors import Problem
    from clusterforge.formats.input_errors import verdict_of

    out = tmp_path / "check.txt"
    emit(verdict_of([Problem("names no bucket", path="aws.data_bucket")]), "text", out, 0, show_info=False)
    [line] = [line for line in out.read_text().splitlines() if " INPUT " in line]
    assert line.split() == ["ERROR", "INPUT", "cluster:", "names", "no", "bucket"], line
