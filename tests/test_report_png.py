"""`report -f png`: the header and the drawings shot at their real size by the system Chromium through Playwright,
so every rack of a hall (and a cloud blueprint's pools) is in the image, measured against the page itself."""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.test_report import browser

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
HALL = EXAMPLES / "onprem-dgx-h100-hall.yaml"
POOL_BLUE = (0x4E, 0x79, 0xA7)  # the first pool's colour (elevation.PALETTE[0])


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def drawings_page(blueprint: Path, max_racks: int = 200) -> str:
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    return build(analyze(blueprint, read_policy()), max_racks, drawings_only=True)


def measure(html: str, tmp_path: Path, *selectors: str) -> dict[str, list[dict[str, float]]]:
    """Bounding boxes (page coordinates, relative to #capture's top) of every element each selector matches, as
    the browser lays the page out at the PNG's width."""
    from playwright.sync_api import sync_playwright

    from clusterforge.report.browser import FLAGS, WIDTH, find_browser

    page_file = tmp_path / "measured.html"
    page_file.write_text(html, encoding="utf-8")
    out: dict[str, list[dict[str, float]]] = {}
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=find_browser(), args=[f for f in FLAGS if f != "--headless"])
        page = chromium.new_page(viewport={"width": WIDTH, "height": 900})
        page.goto(page_file.as_uri())
        top = page.locator("#capture").bounding_box()
        assert top is not None
        for selector in ("#capture", *selectors):
            boxes: list[dict[str, Any]] = [b for b in (e.bounding_box() for e in page.locator(selector).all()) if b]
            out[selector] = [{**b, "y": b["y"] - top["y"]} for b in boxes]
        chromium.close()
    return out


def shoot(cli, blueprint: Path, out: Path, *extra: str) -> str:
    result = cli("report", blueprint, "-f", "png", "-o", out, *extra)
    assert result.exit_code == 0, result.output
    return result.output


@browser
def test_the_six_rack_png_is_the_element_at_its_real_size(cli, tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "elevations.png"
    said = shoot(cli, ONPREM, out)
    boxes = measure(drawings_page(ONPREM), tmp_path, ".rack-card")
    width, height = png_size(out)
    assert (width, height) == (round(boxes["#capture"][0]["width"]), round(boxes["#capture"][0]["height"]))
    assert f"{width}x{height} px" in said
    cards = boxes[".rack-card"]
    assert len(cards) == 6
    assert all(card["y"] + card["height"] <= height for card in cards)  # row b too (the old guess cut it off)
    # every card's racks are in the picture: each card's area holds the pool's colour (its DGX boxes)
    image = Image.open(out).convert("RGB")
    for card in cards:
        area = image.crop((int(card["x"]), int(card["y"]), int(card["x"] + card["width"]),
                           int(card["y"] + card["height"])))
        assert POOL_BLUE in {c for _, c in area.getcolors(maxcolors=1 << 20) or []}, card


@browser
def test_the_33_rack_png_holds_the_last_rack(cli, tmp_path: Path) -> None:
    out = tmp_path / "hall.png"
    shoot(cli, HALL, out)
    boxes = measure(drawings_page(HALL), tmp_path, ".rack-card:last-of-type", ".rack-card")
    assert len(boxes[".rack-card"]) == 33
    last = max(boxes[".rack-card"], key=lambda b: b["y"] + b["height"])
    width, height = png_size(out)
    assert height == round(boxes["#capture"][0]["height"])
    assert last["y"] + last["height"] <= height and last["x"] + last["width"] <= width


@browser
@pytest.mark.parametrize(("example", "instance", "efa"), [
    ("aws-p5.yaml", "p5.48xlarge", 32), ("aws-p5en.yaml", "p5en.48xlarge", 16),
    ("aws-p6-b200.yaml", "p6-b200.48xlarge", 8)])
def test_an_aws_png_draws_the_pools(cli, tmp_path: Path, example: str, instance: str, efa: int) -> None:
    from PIL import Image, ImageStat

    blueprint = EXAMPLES / example
    html = drawings_page(blueprint)
    card = re.search(r'<div class="pool-card" id="pool-gpu".*?</dl></div>', html, re.S)
    assert card, "no pool drawing"
    text = card.group(0)
    assert f"× {instance}" in text and f"{efa} EFA interfaces" in text and "placement group" in text
    assert "FSx for Lustre" in html and "PERSISTENT_2" in html
    boxes = measure(html, tmp_path, ".pool-card", "#fsx")
    pool, fsx = boxes[".pool-card"][0], boxes["#fsx"][0]
    assert pool["width"] > 400 and pool["height"] > 100 and fsx["height"] > 80
    out = tmp_path / "pools.png"
    shoot(cli, blueprint, out)
    width, height = png_size(out)
    assert height == round(boxes["#capture"][0]["height"]) and fsx["y"] + fsx["height"] <= height
    below = Image.open(out).convert("RGB").crop((0, 80, width, height))  # under the header: not blank
    assert max(ImageStat.Stat(below).stddev) > 20
    assert POOL_BLUE in {c for _, c in below.getcolors(maxcolors=1 << 20) or []}  # the instances drawn


def test_aws_capacity_and_storage_in_the_page(cli, tmp_path: Path) -> None:
    """The pool drawing names the capacity each pool launches into and the FSx figures (no browser needed)."""
    pages = {name: drawings_page(EXAMPLES / name) for name in ("aws-p5.yaml", "aws-p5en.yaml", "aws-p6-b200.yaml")}
    assert "Capacity Block cr-0123456789abcdef0" in pages["aws-p5.yaml"]
    assert "ODCR cr-0fedcba9876543210" in pages["aws-p5en.yaml"]
    assert "<dt>capacity</dt><dd>on-demand</dd>" in pages["aws-p6-b200.yaml"]
    assert "12.3 GB/s (250 MB/s per TiB)" in pages["aws-p5.yaml"]  # 49.2 TiB x 250 MB/s
    assert "placement group nlp-p5-gpu (strategy cluster)" in pages["aws-p5.yaml"]
    assert "no placement group" in pages["aws-p5en.yaml"]  # its head node opts out
    assert 'id="cost"' not in pages["aws-p5.yaml"] and 'id="findings"' not in pages["aws-p5.yaml"]


def test_parts_are_cut_between_racks() -> None:
    from clusterforge.report.browser import parts

    assert parts(900, [100, 500]) == [(0, 900)]
    # 40,000 px with a rack starting every 580 px: each part ends where a rack begins, none over the limit
    cuts = [60 + 580 * i for i in range(70)]
    got = parts(40_000, cuts, limit=16_000)
    assert sum(h for _, h in got) == 40_000 and all(h <= 16_000 for _, h in got)
    assert all(top in cuts for top, _ in got[1:])
    assert parts(40_000, [], limit=16_000) == [(0, 16_000), (16_000, 16_000), (32_000, 8_000)]  # nowhere to cut


@browser
def test_a_png_taller_than_the_limit_comes_in_parts(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    import clusterforge.report.browser as shots

    monkeypatch.setattr(shots, "MAX_PART", 2_000)
    out = tmp_path / "hall.png"
    said = shoot(cli, HALL, out)
    files = sorted(tmp_path.glob("hall*.png"), key=lambda f: (len(f.name), f.name))
    assert len(files) >= 3 and files[0] == out and files[1].name == "hall-2.png"
    assert all(str(f) in said for f in files)
    heights = [png_size(f)[1] for f in files]
    assert all(h <= 2_000 for h in heights)
    whole = round(measure(drawings_page(HALL), tmp_path)["#capture"][0]["height"])
    assert sum(heights) == whole  # nothing lost between the parts
    assert all(Image.open(f).size[0] == 1300 for f in files)


def test_a_missing_chromium_binary_is_an_input_error(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHROMIUM", str(tmp_path / "no-such-chromium"))
    result = cli("report", ONPREM, "-f", "png", "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and "Chromium made no screenshot" in result.stderr, result.output
    assert not (tmp_path / "x.png").exists()
