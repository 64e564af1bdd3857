"""The report of a 100,000-GPU hall (4,167 racks, benchmarks/generate.py) stays a page a reviewer can use: identical
rows are one line of the rows table, findings are one line per rule, the racks with findings are the ones drawn,
and no link points at a rack the page does not draw."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.test_report import browser

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"


@pytest.fixture(scope="module")
def big_hall(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The QM9700 hall of 100,000 GPUs: NET-001 fails it and every one of its 4,167 racks warns PWR-002."""
    where = tmp_path_factory.mktemp("hall")
    blueprint = where / "hall-100k.yaml"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--gpus", "100000", "--compact",
                    "--switch", "qm9700", "-o", str(blueprint)], check=True, capture_output=True)
    from click.testing import CliRunner

    from clusterforge.cli.main import app

    out = where / "report.html"
    result = CliRunner().invoke(app, ["report", str(blueprint), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "4167 racks" in result.output
    return out, out.read_text(encoding="utf-8")


def section(html: str, name: str) -> str:
    found = re.search(rf'<section id="{name}">.*?</section>', html, re.S)
    assert found, name
    return found.group(0)


@pytest.mark.parametrize("max_racks", [None, "50"])
def test_every_rack_link_has_its_rack(big_hall: tuple[Path, str], cli, tmp_path: Path, max_racks: str | None) -> None:
    page, html = big_hall
    if max_racks:  # fewer racks drawn than the findings list names: the rest are named, not linked
        out = tmp_path / "fewer.html"
        assert cli("report", page.with_name("hall-100k.yaml"), "-o", out, "--max-racks", max_racks).exit_code == 0
        html = out.read_text(encoding="utf-8")
        assert "r002k02 (not drawn" in html  # the 51st rack, in the first 100 places of PWR-002
    links = set(re.findall(r'href="#rack-([^"]+)"', html))
    drawn = set(re.findall(r'id="rack-([^"]+)"', html))
    assert links and links <= drawn, sorted(links - drawn)[:5]
    assert len(drawn) == int(max_racks or 200)  # 200: the default --max-racks
    assert f"Showing {len(drawn)} of 4,167 racks" in html


def test_identical_rows_are_one_line(big_hall: tuple[Path, str]) -> None:
    _, html = big_hall
    rows = section(html, "rows")
    lines = re.findall(r"<tr[ >].*?</tr>", rows, re.S)[1:]  # less the header
    assert len(lines) <= 6  # was 174, one per row
    grouped = [int(n) for n in re.findall(r"\((\d+) rows, each\)", rows)]
    assert grouped and max(grouped) > 100
    assert sum(grouped) + (len(lines) - len(grouped)) == 174  # every row is counted once
    assert re.search(r"rows r000–r\d+ \(\d+ rows, each\)", rows)


def test_findings_are_one_line_per_rule(big_hall: tuple[Path, str]) -> None:
    _, html = big_hall
    findings = section(html, "findings")
    lines = re.findall(r'<tr id="finding-([A-Z]+-\d+)-(\w+)">.*?</tr>', findings, re.S)
    assert sorted(lines) == [("NET-001", "error"), ("PWR-002", "warning"), ("PWR-003", "warning")]
    pwr002 = re.search(r'<tr id="finding-PWR-002-warning">.*?</tr>', findings, re.S)
    assert pwr002
    text = pwr002.group(0)
    assert '<td class="num">4,167</td>' in text and "<details>" in text
    assert text.count("<li>") == 100 and "4,067 more" in text  # the first 100, then a count
    assert len(html) < 1_000_000  # was 3.6 MB


@browser
def test_the_page_is_a_usable_height(big_hall: tuple[Path, str], tmp_path: Path) -> None:
    from tests.test_report_png import measure

    _, html = big_hall
    boxes = measure(html, tmp_path, "header", "#elevations", "#findings")
    assert boxes["#capture"][0]["height"] < 40_000  # was 344,363 px
    header = boxes["header"][0]
    assert boxes["#findings"][0]["y"] < header["y"] + header["height"] + 40  # what fails leads, under the header
    # then the summary and the 4-line rows table: the racks start on the first screen, not after 174 table rows
    assert boxes["#elevations"][0]["y"] < 1_200


def test_racks_with_findings_are_drawn_first(cli, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(ONPREM.read_text().replace("name: b02-a, side: A, voltage: 415, amps: 60",
                                                 "name: b02-a, side: A, voltage: 208, amps: 30"))
    out = tmp_path / "r.html"
    result = cli("report", broken, "-o", out, "--max-racks", "2")
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert sorted(re.findall(r'data-rack="([^"]+)"', html)) == ["a01", "b02"]  # b02 fails: drawn before a02
    assert '<a href="#rack-b02"' in html
    links = set(re.findall(r'href="#rack-([^"]+)"', html))
    assert links <= {"a01", "b02"}


def test_a_rack_not_drawn_is_named_without_a_link(cli, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(ONPREM.read_text().replace("name: b02-a, side: A, voltage: 415, amps: 60",
                                                 "name: b02-a, side: A, voltage: 208, amps: 30")
                      .replace("name: b03-a, side: A, voltage: 415, amps: 60",
                               "name: b03-a, side: A, voltage: 208, amps: 30"))
    out = tmp_path / "r.html"
    assert cli("report", broken, "-o", out, "--max-racks", "1").exit_code == 0
    html = out.read_text()
    assert re.findall(r'data-rack="([^"]+)"', html) == ["b02"]
    assert "b03 (not drawn)" in html and 'href="#rack-b03"' not in html


def test_rows_group_only_when_they_print_the_same() -> None:
    from clusterforge.report import Bar
    from clusterforge.report.rows import Row, group_rows

    def row(name: str, kw: float, racks: int = 24) -> Row:
        return Row(name, racks, kw, Bar("air", kw, 300), Bar("liquid", 0, 0))

    groups = group_rows([row("a", 700), row("b", 700), row("c", 700), row("d", 650), row("e", 700),
                         row("f", 700, racks=12)])
    assert [g.label for g in groups] == ["rows a–c (3 rows, each)", "d", "e", "f"]
