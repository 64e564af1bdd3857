"""Teams on a shared site: `site: !include`, team placements, and the combined facility check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusterforge.blueprint.load import load_blueprint
from clusterforge.core.errors import ClusterforgeError
from clusterforge.files.paths import machine_path
from tests.conftest import EXAMPLES, line_of
from tests.hostile.cases_verdicts import TEAMMATE

SHARED = EXAMPLES / "shared-site"




def test_team_blueprint_gets_the_included_site_and_its_placements(hall: Path) -> None:
    loaded = load_blueprint(hall / "team-vision.yaml")
    site = loaded.cluster.site
    assert site is not None and site.name == "dc1"
    assert [len(r.devices) for r in site.rows[0].racks] == [1, 1, 0, 0]
    # a rack's line is in the site file; a placed device's line is the team's placement entry
    assert loaded.source.locate(("site", "rows", 0, "racks", 1, "cooling")) == (
        str((hall / "site-dc1.yaml").resolve()), line_of(hall / "site-dc1.yaml", "cooling: {kind: rdhx"))
    assert loaded.source.locate(("site", "rows", 0, "racks", 1, "devices", 0)) == (
        str(hall / "team-vision.yaml"), line_of(hall / "team-vision.yaml", "rack: a02"))


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
    assert error["file"].endswith("site-dc1.yaml") and error["line"] == line_of(hall / "site-dc1.yaml", "feeds:")


def test_placement_into_a_missing_rack(hall: Path) -> None:
    team = hall / "team-nlp.yaml"
    team.write_text(team.read_text().replace("rack: a03", "rack: a09"))
    with pytest.raises(ClusterforgeError) as exc:
        load_blueprint(team)
    [problem] = exc.value.problems
    assert problem.line == line_of(team, "rack: a09") and "no rack 'a09'" in problem.message


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
    assert problem.file == str(site.resolve()) and problem.line == line_of(site, "reserved_uu")




def _tight_contract(hall: Path, kw: int) -> None:
    site = hall / "site-dc1.yaml"
    site.write_text(site.read_text().replace("contracted_it_kw: 300", f"contracted_it_kw: {kw}"))


def test_a_teammate_never_lowers_the_facility_load(cli, hall: Path) -> None:
    # vision: 4 DGX H100 (40.8 kW) and one QM9700 leaf (1.72 kW) = 42.5 kW against a 42 kW contract
    _tight_contract(hall, 42)
    (hall / "team-ops.yaml").write_text(TEAMMATE)
    alone = cli("check", hall / "team-vision.yaml", "-f", "json")
    assert alone.exit_code == 1 and "PWR-007" in alone.stdout
    together = cli("check", hall / "team-vision.yaml", hall / "team-ops.yaml", "-f", "json")
    assert together.exit_code == 1, together.output
    [error] = [f for f in json.loads(together.stdout)["findings"] if f["id"] == "PWR-007"]
    assert "43.6" in error["message"] or error["measured"] == pytest.approx(43.62)


def test_combined_plan_racks_every_teams_switches(cli, hall: Path) -> None:
    """The facility rules see each team's fabric switches in the racks, and RCK-007 points into the team's file."""
    from clusterforge.compose.shared_site import combine, combined_plan
    from clusterforge.pipeline.analysis import load, read_policy

    policy = read_policy()
    group = [load(hall / "team-vision.yaml", policy), load(hall / "team-nlp.yaml", policy)]
    combined = combine(group)
    plan = combined_plan(group, combined, policy.config)
    racked = [(s.switch, s.count) for rack in plan.racks for s in rack.switches]
    assert sum(count for _, count in racked) == 2  # one leaf per team
    assert sum(load.power_kw for load in plan.loads) == pytest.approx(7 * 10.2 + 2 * 1.72)
    assert [f.path for f in plan.fabrics] == [("teams", "vision", "fabric", "switch"),
                                              ("teams", "nlp", "fabric", "switch")]


def test_unplaced_switches_of_a_team_point_into_its_file(cli, hall: Path) -> None:
    # one network rack with room for one 1U leaf: each team's leaf fits alone; together the second does not
    site = hall / "site-dc1.yaml"
    site.write_text(site.read_text() + """\
  - name: n
    cooling: {crah_kw: [60, 60, 60]}
    racks:
      - name: n01
        role: network
        u_height: 3
        reserved_u: 2
        cooling: {kind: rdhx, air_kw: 50}
        feeds:
          - {side: A, voltage: 415, amps: 60, phase: 3}
          - {side: B, voltage: 415, amps: 60, phase: 3}
""")
    vision, nlp = hall / "team-vision.yaml", hall / "team-nlp.yaml"
    for team in (vision, nlp):
        assert "RCK-007" not in cli("check", team, "-f", "json").stdout
    result = cli("check", vision, nlp, "-f", "json")
    [rck] = [f for f in json.loads(result.stdout)["findings"] if f["id"] == "RCK-007"]
    assert rck["path"] == "teams.nlp.fabric.switch" and rck["cluster"] == "site:dc1"
    assert rck["file"] == machine_path(str(nlp)) and rck["line"] == line_of(nlp, "fabric:")
