"""`clusterforge affected`: the blueprints a change touches, by the loader's own include graph. Every way of
writing a blueprint that `check` loads as a Cluster is found, and every file it reads counts as part of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from clusterforge.cli.main import app
from clusterforge.compose.affected import touched
from tests.conftest import EXAMPLES

SITE = (EXAMPLES / "shared-site" / "site-dc1.yaml").read_text()
TEAM = (EXAMPLES / "shared-site" / "team-nlp.yaml").read_text()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """teams/nlp.yaml includes sites/dc1.yaml through ../; teams/flow.yml is a Cluster written in flow style with
    an escaped kind and a quoted include; lib/pools.yaml is included two levels down; other YAML is not a Cluster."""
    (tmp_path / "sites").mkdir()
    (tmp_path / "teams").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "sites" / "dc1.yaml").write_text(SITE)
    (tmp_path / "teams" / "nlp.yaml").write_text(TEAM.replace("!include site-dc1.yaml", "!include ../sites/dc1.yaml"))
    (tmp_path / "lib" / "pools.yaml").write_text("- {name: gpu, hardware: dgx-h100, count: 1, partition: p}\n")
    (tmp_path / "lib" / "site.yaml").write_text("name: s\nrows: []\nextra: !include pools.yaml\n")
    (tmp_path / "teams" / "flow.yml").write_text(
        '{"apiVersion": clusterforge/v1, "kind": "Clu\\x73ter", name: f, target: onprem,\n'
        ' pools: !include "../lib/pools.yaml", site: !include "./../lib/site.yaml"}\n')
    (tmp_path / "teams" / "policy.yaml").write_text("kind: PolicyConfig\n")
    (tmp_path / "teams" / "notes.yaml").write_text("- a list\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLUSTERFORGE_INCLUDE_ROOT", str(tmp_path))
    return tmp_path


def names(paths: tuple[Path, ...]) -> list[str]:
    return sorted(str(p) for p in paths)


def test_a_changed_include_touches_every_blueprint_that_reads_it(tree: Path) -> None:
    assert names(touched([Path("sites/dc1.yaml")], [Path(".")]).blueprints) == ["teams/nlp.yaml"]
    assert names(touched([Path("lib/pools.yaml")], [Path(".")]).blueprints) == ["teams/flow.yml"]  # two levels down
    assert names(touched([Path("teams/flow.yml")], [Path("teams")]).blueprints) == ["teams/flow.yml"]
    assert touched([Path("README.md")], [Path(".")]).blueprints == ()


def test_a_kind_and_an_include_spelled_otherwise_are_still_found(tree: Path) -> None:
    """The escaped `Clu\\x73ter` in flow style and the quoted `./../` include: a name-based scan misses both, the
    loader does not (and `check` loads the file as a Cluster)."""
    result = touched([Path("lib/site.yaml")], [Path("teams")])
    assert names(result.blueprints) == ["teams/flow.yml"]


def test_a_deleted_include_touches_the_blueprints_that_still_name_it(tree: Path) -> None:
    (tree / "sites" / "dc1.yaml").unlink()
    assert names(touched([Path("sites/dc1.yaml")], [Path(".")]).blueprints) == ["teams/nlp.yaml"]


def test_an_unparseable_change_is_handed_to_check_and_nothing_else_is(tree: Path) -> None:
    (tree / "lib" / "pools.yaml").write_text("- [broken\n")
    # the broken fragment itself (check says why), the Cluster that reads it, not the fragment between them
    assert names(touched([Path("lib/pools.yaml")], [Path(".")]).blueprints) == ["lib/pools.yaml", "teams/flow.yml"]
    (tree / "teams" / "new.yaml").write_text("kind: Cluster\nname: [\n")
    assert names(touched([Path("teams/new.yaml")], [Path("teams")]).blueprints) == ["teams/new.yaml"]
    assert "teams/new.yaml" not in names(touched([Path("sites/dc1.yaml")], [Path("teams")]).blueprints)


def test_changed_yaml_that_nothing_judges_is_said_with_its_kind(tree: Path) -> None:
    result = touched([Path("teams/policy.yaml"), Path("teams/notes.yaml"), Path("lib/pools.yaml")], [Path(".")])
    assert names(result.blueprints) == ["teams/flow.yml"]
    assert set(result.notes) == {
        "teams/policy.yaml: changed, not a Cluster (kind: 'PolicyConfig') and included by no blueprint considered: "
        "nothing to judge",
        "teams/notes.yaml: changed, not a Cluster (no kind) and included by no blueprint considered: nothing to judge"}


def test_all_lists_every_cluster(tree: Path) -> None:
    assert names(touched([], [Path(".")], everything=True).blueprints) == ["teams/flow.yml", "teams/nlp.yaml"]


def affected(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(app, ["affected", *args], input=stdin, catch_exceptions=False)


def test_the_command_reads_nul_separated_lists_and_writes_them(tree: Path) -> None:
    odd = "teams/-h\nodd.yaml"  # a name that reads as an option and holds a line break
    Path(odd).write_text(TEAM.replace("!include site-dc1.yaml", "!include ../sites/dc1.yaml"))
    Path("changed").write_bytes(b"sites/dc1.yaml\0")
    result = affected("-z", "--changed-from", "changed", "--among-from", "-", stdin=f"{odd}\0teams/nlp.yaml\0".encode())
    assert result.exit_code == 0, result.output
    assert result.stdout.split("\0") == [odd, "teams/nlp.yaml", ""]
    assert "2 blueprint(s) touched" in result.stderr
    refused = affected("sites/dc1.yaml", "--among", odd)
    assert refused.exit_code == 2 and "use -z" in refused.stderr


def test_the_include_root_is_the_default_place_to_look(tree: Path) -> None:
    os.chdir(tree / "teams")
    result = affected(str(tree / "sites" / "dc1.yaml"))
    assert result.exit_code == 0 and result.stdout == f"{tree / 'teams' / 'nlp.yaml'}\n"


def test_an_unreadable_list_is_exit_2(tree: Path) -> None:
    result = affected("--changed-from", "missing.txt")
    assert result.exit_code == 2 and "missing.txt: cannot be read" in result.stderr
