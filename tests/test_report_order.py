"""The report leads with what fails: failing racks are drawn first (then racks with warnings, then passing ones,
in hall order within each), the findings are the first section under the header, each rule in the header links
to its findings, and every count reads as English ("1 error", "2 errors")."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLES
from tests.test_report import browser
from tests.test_report_png import png_size

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
FAILING, WARNING = ("b02", "b04"), ("a03",)
# hall order is a01..a05, b01..b05; the report's order puts b02 and b04 (errors) and a03 (a warning) first
DRAWN_ORDER = ["b02", "b04", "a03", "a01", "a02", "a04", "a05", "b01", "b03", "b05"]
BAD_RED = (0xC6, 0x28, 0x28)  # --bad: a failing rack's frame and card border


def ten_racks(where: Path) -> Path:
    """Two rows of five racks of two DGX H100 each: b02 and b04 fail PWR-001/002 (a 208 V 30 A side A), a03
    warns CLG-001 (a 23 kW door for 20 kW of heat), the other seven pass."""
    data = yaml.safe_load(ONPREM.read_text())
    template = data["site"]["rows"][0]["racks"][0]
    rows = []
    for row in "ab":
        racks = []
        for i in range(1, 6):
            name = f"{row}{i:02d}"
            rack = copy.deepcopy(template) | {"name": name, "devices": [{"pool": "gpu", "count": 2}]}
            weak = name in FAILING
            rack["feeds"] = [{"name": f"{name}-a", "side": "A", "voltage": 208 if weak else 415,
                              "amps": 30 if weak else 60, "phase": 3},
                             {"name": f"{name}-b", "side": "B", "voltage": 415, "amps": 60, "phase": 3}]
            if name in WARNING:
                rack["cooling"] = {"kind": "rdhx", "air_kw": 23}
            racks.append(rack)
        rows.append({"name": row, "cooling": {"crah_kw": [200, 200, 200]}, "racks": racks})
    data["site"]["rows"] = rows
    data["pools"][0]["count"] = 20
    path = where / "ten-racks.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def hall(tmp_path: Path) -> Path:
    return ten_racks(tmp_path)


def report(cli, blueprint: Path, out: Path, *extra: str) -> str:
    result = cli("report", blueprint, "-o", out, *extra)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


class Outline(HTMLParser):
    """The page's landmarks in document order: (tag, id) of header, main and each section, and the header's rule
    chips (an <a> or <span> with class chip) with their href."""

    def __init__(self) -> None:
        super().__init__()
        self.landmarks: list[tuple[str, str]] = []
        self.chips: list[dict[str, str]] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if "id" in found:
            self.ids.append(found["id"])
        if tag in ("header", "main", "section"):
            self.landmarks.append((tag, found.get("id", "")))
        if "chip" in found.get("class", "").split():
            self.chips.append({"tag": tag, **found})


def outline(html: str) -> Outline:
    parsed = Outline()
    parsed.feed(html)
    return parsed


def test_failing_racks_lead_the_html_elevations(cli, hall: Path, tmp_path: Path) -> None:
    html = report(cli, hall, tmp_path / "r.html")
    assert re.findall(r'data-rack="([^"]+)"', html) == DRAWN_ORDER
    standings = re.findall(r'data-rack="[^"]+" data-standing="(\w+)"', html)
    assert standings == ["failing"] * 2 + ["warning"] + ["passing"] * 7
    titles = re.findall(r'<div class="row-title"><span class="lvl \w+">([^<]+)</span> · row (\w+)</div>', html)
    assert titles == [("failing", "b"), ("with warnings", "a"), ("passing", "a"), ("passing", "b")]
    assert "2 failing, 1 with warnings, 7 passing" in html


def test_the_cap_keeps_the_drawing_order(cli, hall: Path, tmp_path: Path) -> None:
    html = report(cli, hall, tmp_path / "r.html", "--max-racks", "4")
    assert re.findall(r'data-rack="([^"]+)"', html) == DRAWN_ORDER[:4]
    assert "Showing 4 of 10 racks; 6 more are summarised" in html


def test_racks_to_draw_is_a_stable_order_by_standing() -> None:
    from clusterforge.report.rows import rack_blocks, racks_to_draw

    names = ["a1", "a2", "a3", "b1", "b2", "b3"]
    errors, warnings = {"b3": 1, "a2": 2}, {"b1": 1, "a2": 1}  # a2: errors and warnings, failing wins
    assert racks_to_draw(names, errors, warnings, 10) == ["a2", "b3", "b1", "a1", "a3", "b2"]
    assert racks_to_draw(names, errors, warnings, 3) == ["a2", "b3", "b1"]
    assert racks_to_draw(names, {}, {}, 10) == names  # nothing found: hall order
    blocks = rack_blocks([("a2", "a", "failing"), ("b3", "b", "failing"), ("b1", "b", "warning"),
                          ("a1", "a", "passing"), ("a3", "a", "passing"), ("b2", "b", "passing")])
    assert [(b.standing, b.row, b.racks) for b in blocks] == [
        ("failing", "a", ("a2",)), ("failing", "b", ("b3",)), ("warning", "b", ("b1",)),
        ("passing", "a", ("a1", "a3")), ("passing", "b", ("b2",))]


def test_findings_are_the_first_section_after_the_header(cli, hall: Path, tmp_path: Path) -> None:
    page = outline(report(cli, hall, tmp_path / "r.html"))
    sections = [name for tag, name in page.landmarks if tag == "section"]
    assert page.landmarks[:3] == [("header", ""), ("main", ""), ("section", "findings")], page.landmarks
    assert sections.index("findings") < sections.index("summary") < sections.index("elevations")


def test_each_rule_chip_links_to_its_findings(cli, hall: Path, tmp_path: Path) -> None:
    html = report(cli, hall, tmp_path / "r.html")
    page = outline(html)
    rows = re.findall(r'<tr id="(finding-([A-Z]+-\d+)-(\w+))">', html)
    assert sorted(r[1:] for r in rows) == [("CLG-001", "warning"), ("PWR-001", "error"), ("PWR-002", "error"),
                                           ("PWR-003", "warning")]
    assert [c["tag"] for c in page.chips] == ["a"] * len(rows)
    assert [c["href"] for c in page.chips] == [f"#{anchor}" for anchor, _, _ in rows]
    for anchor, rule, level in rows:
        assert page.ids.count(anchor) == 1  # the target exists, once
        row = re.search(rf'<tr id="{anchor}">.*?</tr>', html, re.S)
        assert row and f'<td class="rule">{rule}</td>' in row.group(0) and f'<td class="lvl {level}">' in row.group(0)


@pytest.mark.parametrize("drawings_only", [False, True])
def test_no_link_leads_nowhere(hall: Path, drawings_only: bool) -> None:
    """Every in-page link has its target; the PNG's page has no findings table, so its chips are not links."""
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    html = build(analyze(hall, read_policy()), drawings_only=drawings_only)
    page = outline(html)
    targets = set(re.findall(r'href="#([^"]+)"', html))
    if drawings_only:
        assert not targets
    else:
        assert targets and targets <= set(page.ids), targets - set(page.ids)
    assert page.chips and all(c["tag"] == ("span" if drawings_only else "a") for c in page.chips)


def test_one_error_and_one_warning_read_singular(cli, tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"  # side A of b02 at 20 A: PWR-002 fails b02 alone; PWR-003 warns as ever
    one.write_text(ONPREM.read_text().replace("name: b02-a, side: A, voltage: 415, amps: 60",
                                              "name: b02-a, side: A, voltage: 415, amps: 20"))
    out = tmp_path / "one.html"
    result = cli("report", one, "-o", out)
    assert "FAIL: 1 error, 1 warning, 6 racks" in result.output
    html = out.read_text(encoding="utf-8")
    assert '<span id="counts">1 error · 1 warning · 0 waived</span>' in html
    assert '<a href="#findings">1 error</a>' in html  # b02's card
    assert "2 findings by rule and level" in html
    wrong = re.findall(r"\b1 (?:errors|warnings|findings|racks|feeds|readings|nodes|lines|switches|cables)\b", html)
    assert not wrong


def test_many_read_plural(cli, hall: Path, tmp_path: Path) -> None:
    html = report(cli, hall, tmp_path / "r.html")
    assert '<span id="counts">4 errors · 2 warnings · 0 waived</span>' in html
    assert '<a href="#findings">2 errors</a>' in html and '<a href="#findings">1 warning</a>' in html


def test_counted_words() -> None:
    from clusterforge.report.words import agree, counted

    assert [counted(n, "error") for n in (0, 1, 2, 4167)] == ["0 errors", "1 error", "2 errors", "4,167 errors"]
    assert counted(1, "switch", "switches") == "1 switch" and counted(3, "leaf", "leaves") == "3 leaves"
    assert (agree(1, "is", "are"), agree(2, "is", "are")) == ("is", "are")


def card_boxes(html: str, tmp_path: Path) -> list[dict[str, Any]]:
    """Each rack card's name and box as the browser lays out the PNG's page (coordinates from #capture's corner,
    which the PNG's pixels share: scale 1)."""
    from playwright.sync_api import sync_playwright

    from clusterforge.report.browser import FLAGS, WIDTH, find_browser

    page_file = tmp_path / "cards.html"
    page_file.write_text(html, encoding="utf-8")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=find_browser(), args=[f for f in FLAGS if f != "--headless"])
        try:
            page = chromium.new_page(viewport={"width": WIDTH, "height": 900})
            page.goto(page_file.as_uri())
            boxes: list[dict[str, Any]] = page.evaluate("""() => {
              const top = document.querySelector('#capture').getBoundingClientRect();
              return [...document.querySelectorAll('.rack-card')].map(card => {
                const r = card.getBoundingClientRect();
                return {rack: card.dataset.rack, x: r.left - top.left, y: r.top - top.top, w: r.width, h: r.height};
              });
            }""")
        finally:
            chromium.close()
    return boxes


@browser
def test_the_png_shows_the_failing_racks_first(cli, hall: Path, tmp_path: Path) -> None:
    from PIL import Image

    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    out = tmp_path / "hall.png"
    result = cli("report", hall, "-f", "png", "-o", out)
    assert result.exit_code == 0, result.output
    cards = card_boxes(build(analyze(hall, read_policy()), drawings_only=True), tmp_path)
    reading = sorted(cards, key=lambda c: (round(c["y"]), c["x"]))  # top to bottom, left to right
    assert [c["rack"] for c in reading] == DRAWN_ORDER
    width, height = png_size(out)
    image = Image.open(out).convert("RGB")
    for card in reading:
        assert card["y"] + card["h"] <= height and card["x"] + card["w"] <= width
        area = image.crop((int(card["x"]), int(card["y"]), int(card["x"] + card["w"]), int(card["y"] + card["h"])))
        red = BAD_RED in {c for _, c in area.getcolors(maxcolors=1 << 20) or []}
        assert red == (card["rack"] in FAILING), card  # the red frames are the first two racks in the image
