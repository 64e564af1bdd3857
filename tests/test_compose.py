"""Teams on a shared site: `site: !include`, team placements, and the combined facility check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clusterforge.errors import ClusterforgeError
from clusterforge.load import load_blueprint
from tests.conftest import EXAMPLES

SHARED = EXAMPLES / "shared-site"


@pytest.fixture
def hall(tmp_path: Path) -> Path:
    for f in SHARED.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_team_blueprint_gets_the_included_site_and_its_placements(hall: Path) -> None:
    loaded = load_blueprint(hall / "team-vision.yaml")
    site = loaded.cluster.site
    assert site is not None and site.name == "dc1"
    assert [len(r.devices) for r in site.rows[0].racks] == [1, 1, 0, 0]
    # a rack's line is in the site file; a placed device's line is the team's placement entry
    assert loaded.source.locate(("site", "rows", 0, "racks", 1, "cooling")) == (
        str((hall / "site-dc1.yaml").resolve()), _line(hall / "site-dc1.yaml", "cooling: {kind: rdhx"))
    assert loaded.source.locate(("site", "rows", 0, "racks", 1, "devices", 0)) == (
        str(hall / "team-vision.yaml"), _line(hall / "team-vision.yaml", "rack: a02"))


def test_examples_pass_together(cli) -> None:
    result = cli("check", *sorted(SHARED.glob("team-*.yaml")), "-f", "json")
    assert result.exit_code == 0, result.output
    assert "facility rules check their combined load" in result.stderr


def test_each_team_passes_alone_but_not_together(cli, hall: Path) -> None:
    nlp = hall / "team-nlp.yaml"
    nlp.write_text(nlp.read_text().replace("{rack: a02, pool: gpu, count: 1}", "{rack: a02, pool: gpu, count: 2}")
                   .replace("count: 3, partition", "count: 4, partition"))
    assert cli("check", nlp).exit_code == 0
    assert cli("check", hall / "team-vision.yaml").exit_code == 0
    result = cli("check", nlp, hall / "team-vision.yaml", "-f", "json")
    assert result.exit_code == 1
    [error] = [f for f in json.loads(result.stdout)["findings"] if f["level"] == "error"]
    # rack a02 now holds 2 + 2 DGX = 40.8 kW; either side gives 34.5 kW
    assert error["id"] == "PWR-002" and "rack a02 draws 40.8 kW" in error["message"]
    assert error["file"].endswith("site-dc1.yaml") and error["line"] == _line(hall / "site-dc1.yaml", "feeds:")


def test_placement_into_a_missing_rack(hall: Path) -> None:
    team = hall / "team-nlp.yaml"
    team.write_text(team.read_text().replace("rack: a03", "rack: a09"))
    with pytest.raises(ClusterforgeError) as exc:
        load_blueprint(team)
    [problem] = exc.value.problems
    assert problem.line == _line(team, "rack: a09") and "no rack 'a09'" in problem.message


def test_include_errors_are_located(tmp_path: Path) -> None:
    bp = tmp_path / "bp.yaml"
    bp.write_text("apiVersion: clusterforge/v1\nkind: Cluster\nname: x\ntarget: onprem\nsite: !include nope.yaml\n"
                  "pools: [{name: gpu, hardware: dgx-h100, count: 1}]\n")
    with pytest.raises(ClusterforgeError, match="no such file") as exc:
        load_blueprint(bp)
    assert exc.value.problems[0].line == 5
    loop = tmp_path / "loop.yaml"
    loop.write_text("a: !include loop.yaml\n")
    bp.write_text(bp.read_text().replace("nope.yaml", "loop.yaml"))
    with pytest.raises(ClusterforgeError, match="includes itself"):
        load_blueprint(bp)


def test_errors_inside_the_site_file_point_into_it(hall: Path) -> None:
    site = hall / "site-dc1.yaml"
    site.write_text(site.read_text().replace("reserved_u: 2", "reserved_uu: 2"))
    with pytest.raises(ClusterforgeError) as exc:
        load_blueprint(hall / "team-vision.yaml")
    problem = exc.value.problems[0]
    assert problem.file == str(site.resolve()) and problem.line == _line(site, "reserved_uu")
