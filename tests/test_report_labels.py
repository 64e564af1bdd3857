"""No label in a rack card prints over another: measured as the browser lays out the PNG's page, every text box
in a card (device labels, the U scale, the rack's name, the bars' captions and figures, the footnote) keeps clear
of every other, and each device label lies on the devices it names. The GB200 NVL72 row's network rack (nine 1U
leaves and five 1U spines) printed fourteen labels 9 px apart in 8 px type before."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.test_report import browser

CLEAR_PX = 1.0  # two labels closer than this read as one ("side A132.0 / 172.5 kW")
SLACK_PX = 0.5  # sub-pixel rounding of a label's box against its device's

CARD_LABELS_JS = """() => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {text: e.textContent.trim(), left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return [...document.querySelectorAll('.rack-card')].map(card => ({
    rack: card.dataset.rack,
    texts: [...card.querySelectorAll('svg.rack text, .bar-label > span, .note')].map(box),
    runs: [...card.querySelectorAll('svg.rack g.run')].map(run => ({
      label: box(run.querySelector('text.label')), devices: [...run.querySelectorAll('rect')].map(box)})),
  }));
}"""


def card_labels(html: str, tmp_path: Path) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    from clusterforge.report.browser import FLAGS, WIDTH, find_browser

    page_file = tmp_path / "labels.html"
    page_file.write_text(html, encoding="utf-8")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=find_browser(), args=[f for f in FLAGS if f != "--headless"])
        try:
            page = chromium.new_page(viewport={"width": WIDTH, "height": 900}, device_scale_factor=1)
            page.goto(page_file.as_uri())
            cards: list[dict[str, Any]] = page.evaluate(CARD_LABELS_JS)
        finally:
            chromium.close()
    return cards


def too_close(a: dict[str, Any], b: dict[str, Any], clear: float = CLEAR_PX) -> bool:
    """Whether two boxes intersect, or come within `clear` px of each other on both axes."""
    return (a["left"] < b["right"] + clear and b["left"] < a["right"] + clear
            and a["top"] < b["bottom"] + clear and b["top"] < a["bottom"] + clear)


def clashes(cards: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(card["rack"], a["text"], b["text"]) for card in cards
            for a, b in combinations(card["texts"], 2) if too_close(a, b)]


def off_device(cards: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Device labels whose box leaves the union of the boxes of the devices they name."""
    out = []
    for card in cards:
        for run in card["runs"]:
            label, devices = run["label"], run["devices"]
            inside = (label["left"] >= min(d["left"] for d in devices) - SLACK_PX
                      and label["right"] <= max(d["right"] for d in devices) + SLACK_PX
                      and label["top"] >= min(d["top"] for d in devices) - SLACK_PX
                      and label["bottom"] <= max(d["bottom"] for d in devices) + SLACK_PX)
            if not inside:
                out.append((card["rack"], label["text"]))
    return out


def test_the_clash_check_sees_touching_and_crossing_boxes() -> None:
    a = {"text": "a", "left": 0, "top": 0, "right": 50, "bottom": 9}
    assert too_close(a, {**a, "text": "b", "top": 9, "bottom": 18})  # stacked with no gap: 1U labels before
    assert too_close(a, {**a, "text": "b", "left": 40, "right": 90})  # crossing
    assert not too_close(a, {**a, "text": "b", "top": 11, "bottom": 20})
    assert not too_close(a, {**a, "text": "b", "left": 58, "right": 90})  # beside it, 8 px apart


def test_identical_1u_devices_share_one_label() -> None:
    from clusterforge.report.elevation import Slot, label_runs

    leaves = [Slot("leaf", 16 + i, 1, "qm9700", True) for i in range(9)]
    spines = [Slot("spine", 11 + i, 1, "qm9700", True) for i in range(5)]
    servers = [Slot("gpu", 1, 8, "dgx-h100"), Slot("gpu", 9, 8, "dgx-h100")]
    lone = [Slot("leaf", 30, 1, "qm9700", True)]  # a gap below it: its own label
    runs = label_runs(leaves + spines + servers + lone)
    assert [(r[0].pool, r[0].bottom, len(r)) for r in runs] == [
        ("gpu", 1, 1), ("gpu", 9, 1), ("spine", 11, 5), ("leaf", 16, 9), ("leaf", 30, 1)]


@browser
@pytest.mark.parametrize("blueprint", ["gb200-nvl72-row", "gb300-nvl72-row", "onprem-dgx-h100.yaml"])
def test_no_label_in_a_rack_card_meets_another(cli, tmp_path: Path, blueprint: str) -> None:
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    if blueprint.endswith(".yaml"):
        path = EXAMPLES / blueprint
    else:
        path = tmp_path / f"{blueprint}.yaml"
        result = cli("new", blueprint, "-o", path)
        assert path.exists(), result.output
    cards = card_labels(build(analyze(path, read_policy()), drawings_only=True), tmp_path)
    assert cards and all(card["texts"] and card["runs"] for card in cards)
    assert not clashes(cards)
    assert not off_device(cards)
    if blueprint == "gb200-nvl72-row":  # the network rack's fourteen switches: two labels, one per stack
        network = [c for c in cards if any("qm9700" in r["label"]["text"] for r in c["runs"])]
        assert [r["label"]["text"] for c in network for r in c["runs"]] == ["spine · qm9700 ×5", "leaf · qm9700 ×9"]
