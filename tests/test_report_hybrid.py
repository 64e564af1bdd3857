"""The report of a hybrid (examples/hybrid-burst.yaml: 16 DGX H100 and a controller in the hall, up to 32
p5.48xlarge that SLURM powers up in AWS): it counts nodes and GPUs alike (both with the burst pool at its
max_count, each split into on site and in the cloud), and draws every pool: the hall's in their racks, the cloud
pool as a block of its own with its instance type and counts, in the HTML and so in the PNG. Every legend swatch
stands for something drawn in its colour."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.test_report import browser

HYBRID = EXAMPLES / "hybrid-burst.yaml"
GREEN = (0x59, 0xA1, 0x4F)  # the third pool's colour (elevation.PALETTE[2]): burst's


VOID = {"meta", "br", "link", "img", "input", "hr"}


class Node:
    """An element of the page: its tag, attributes, children and text."""

    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.texts: list[str] = []

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    @property
    def text(self) -> str:
        return " ".join(" ".join([*self.texts, *(child.text for child in self.children)]).split())

    def all(self, tag: str, cls: str = "") -> list[Node]:
        found = [self] if self.tag == tag and (not cls or cls in self.classes) else []
        return found + [n for child in self.children for n in child.all(tag, cls)]

    def one(self, tag: str, cls: str = "", **attrs: str) -> Node:
        [node] = [n for n in self.all(tag, cls) if all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]
        return node


class Page(HTMLParser):
    """The report parsed as the browser reads its elements (a tree of Node)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.root = self.at = Node("#document", {}, None)
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.at.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.at))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.at
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.at = node.parent

    def handle_data(self, data: str) -> None:
        self.at.texts.append(data)


def cards(page: Page) -> dict[str, tuple[str, str]]:
    """The summary's cards: label -> (value, note)."""
    out = {}
    for card in page.root.one("section", id="summary").all("div", "card"):
        value, notes = card.one("b").text, card.all("span", "note")
        out[" ".join(card.texts).strip()] = (value, notes[0].text if notes else "")
    return out


def rack_devices(page: Page) -> list[tuple[str, str]]:
    """(pool or tier, fill) of every box drawn in a rack: `gpu · dgx-h100 at U3` names the pool."""
    return [(rect.one("title").text.split(" · ")[0], rect.attrs["fill"])
            for g in page.root.all("g") if g.classes in (["device"], ["device", "switch"]) for rect in g.all("rect")]


def instances(page: Page) -> list[tuple[str, str, list[str]]]:
    """(pool, fill, classes) of every cloud instance drawn."""
    return [(card.attrs["data-pool"], rect.attrs["fill"], rect.classes)
            for card in page.root.all("div", "pool-card") for rect in card.all("rect", "instance")]


def legend(page: Page) -> list[tuple[str, str]]:
    """(name, colour) of every legend swatch on the page."""
    return [(span.text, span.one("i").attrs["style"].split("background:")[1].strip())
            for p in page.root.all("p", "legend") for span in p.all("span")]


@pytest.fixture(scope="module")
def html(tmp_path_factory: pytest.TempPathFactory) -> str:
    from click.testing import CliRunner

    from clusterforge.cli.main import app

    out = tmp_path_factory.mktemp("hybrid") / "r.html"
    result = CliRunner().invoke(app, ["report", str(HYBRID), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out.read_text()


def test_nodes_and_gpus_are_counted_alike_and_split_by_place(html: str) -> None:
    found = cards(Page(html))
    assert found["nodes"] == ("49", "17 on site + 32 in AWS; 32 powered up on demand (max_count)")  # 1 + 16 + 32
    assert found["GPUs"] == ("384", "128 on site + 256 in AWS; 256 on nodes powered up on demand (max_count)")


def test_every_node_counted_is_drawn(html: str) -> None:
    """The nodes card's 49 are the page's drawings: 17 boxes in the racks and 32 instances in the cloud block."""
    page = Page(html)
    racked = [pool for pool, _ in rack_devices(page) if pool not in ("leaf", "spine")]
    assert sorted(set(racked)) == ["ctl", "gpu"] and len(racked) == 17
    cloud = instances(page)
    assert [pool for pool, _, _ in cloud] == ["burst"] * 32
    assert all("on-demand" in classes for _, _, classes in cloud)  # count 0: each one powered up on demand
    assert len(racked) + len(cloud) == int(cards(page)["nodes"][0])


def test_the_cloud_pool_is_a_block_with_its_type_and_counts(html: str) -> None:
    page = Page(html)
    section = page.root.one("section", id="pools")
    assert section.one("h2").text == "Cloud pools"
    card = section.one("div", "pool-card", data_pool="burst")
    facts = dict(zip((dt.text for dt in card.all("dt")), (dd.text for dd in card.all("dd")), strict=True))
    assert facts["instances"] == "up to 32 × p5.48xlarge (0 always on)"
    assert facts["GPUs"].startswith("256 at max_count (8 each") and facts["network"].startswith("32 EFA")
    assert card.one("text", "title").text == "burst · up to 32 × p5.48xlarge (0 always on)"  # the drawing's own


def test_every_legend_swatch_is_drawn_in_its_colour(html: str) -> None:
    page = Page(html)
    drawn = {(pool, fill) for pool, fill in rack_devices(page)} | {(p, fill) for p, fill, _ in instances(page)}
    fills = {fill for _, fill in drawn}
    swatches = [(name, colour) for name, colour in legend(page) if name != "reserved"]
    assert sorted({name for name, _ in swatches}) == ["burst", "ctl", "fabric switch", "gpu"]
    for name, colour in swatches:
        assert colour in fills, (name, colour)
        if name != "fabric switch":
            assert (name, colour) in drawn, (name, colour)  # in its own pool's boxes
    elevations = page.root.one("section", id="elevations").one("p", "legend")
    racked = {pool for pool, _ in rack_devices(page)}
    assert [span.text for span in elevations.all("span")] == ["ctl", "gpu", "fabric switch", "reserved"]
    assert {"ctl", "gpu"} <= racked and "burst" not in racked  # the racks' legend names what the racks hold


@browser
def test_the_png_draws_the_burst_pool(cli, tmp_path: Path) -> None:
    from PIL import Image

    from tests.test_report_png import drawings_page, measure, png_size, shoot

    page = drawings_page(HYBRID)
    assert page.count('class="instance on-demand"') == 32 and 'id="pool-burst"' in page
    boxes = measure(page, tmp_path, "#pool-burst", ".rack-card")
    out = tmp_path / "hybrid.png"
    shoot(cli, HYBRID, out)
    _, height = png_size(out)
    assert height == round(boxes["#capture"][0]["height"])
    [card] = boxes["#pool-burst"]
    assert card["y"] + card["height"] <= height and card["width"] > 400
    image = Image.open(out).convert("RGB")
    area = image.crop((int(card["x"]), int(card["y"]), int(card["x"] + card["width"]), int(card["y"] + card["height"])))
    colours = dict((c, n) for n, c in area.getcolors(maxcolors=1 << 20) or [])
    assert colours.get(GREEN, 0) > 32 * 100  # the 32 instances in burst's colour (58 x 34 px each, less GPU cells)
    racks = boxes[".rack-card"]
    assert len(racks) == 6 and GREEN not in {  # and nowhere in the racks: it has none
        c for rack in racks for _, c in image.crop((int(rack["x"]), int(rack["y"]), int(rack["x"] + rack["width"]),
                                                    int(rack["y"] + rack["height"]))).getcolors(1 << 20) or []}
