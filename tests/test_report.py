"""The report: one self-contained page, every rack drawn with its servers and bars, rendered in a real
headless Chromium without console errors."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
RACKS = ["a01", "a02", "a03", "b01", "b02", "b03"]
browser = pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium (.ci/run installs it)")


@pytest.fixture
def page(cli, tmp_path: Path) -> Path:
    out = tmp_path / "report.html"
    result = cli("report", ONPREM, "-o", out)
    assert result.exit_code == 0, result.output
    return out


def test_every_rack_with_its_servers_and_bars(page: Path) -> None:
    html = page.read_text()
    for rack in RACKS:
        card = re.search(rf'id="rack-{rack}".*?</div>\s*</div>', html, re.S)
        assert card, rack
        text = card.group(0)
        servers = text.count("gpu · dgx-h100</text>")
        assert servers == (2 if rack in ("b02", "b03") else 3), (rack, servers)
        assert "power vs side A" in text and "power vs side B" in text and "air heat vs rdhx" in text


def test_self_contained(page: Path) -> None:
    html = page.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<script" not in html and "@import" not in html


def test_findings_link_to_racks(cli, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(ONPREM.read_text().replace("name: b02-a, side: A, voltage: 415, amps: 60",
                                                 "name: b02-a, side: A, voltage: 208, amps: 30"))
    out = tmp_path / "r.html"
    assert cli("report", broken, "-o", out).exit_code == 0
    html = out.read_text()
    assert '<a href="#rack-b02">' in html and 'class="rack-card failing" id="rack-b02"' in html
    assert "FAIL" in html


def test_aws_report_lists_pools(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", EXAMPLES / "aws-p5.yaml", "-o", out).exit_code == 0
    html = out.read_text()
    assert "p5.48xlarge" in html and "32 EFA interfaces" in html and "data-rack=" not in html


@browser
def test_renders_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    from PIL import Image, ImageStat

    from clusterforge.report.browser import run

    dom = run(["--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()])
    assert "CONSOLE" not in dom.stderr, dom.stderr
    assert sorted(re.findall(r'data-rack="([^"]+)"', dom.stdout)) == RACKS
    shot = tmp_path / "shot.png"
    run([f"--screenshot={shot}", "--window-size=1300,2600", page.as_uri()])
    image = Image.open(shot).convert("RGB")
    assert image.size == (1300, 2600)
    assert max(ImageStat.Stat(image).stddev) > 20  # not a blank page
    # the DGX boxes are drawn in the pool's colour (#4e79a7) somewhere on the page
    assert (0x4E, 0x79, 0xA7) in {c for _, c in image.getcolors(maxcolors=1 << 20) or []}


@browser
def test_console_error_detection_can_fail(tmp_path: Path) -> None:
    from clusterforge.report.browser import run

    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("broken")</script></body></html>')
    assert "CONSOLE" in run(["--enable-logging=stderr", "--v=0", "--dump-dom", bad.as_uri()]).stderr


@browser
def test_png_of_the_elevations(cli, tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "elevations.png"
    result = cli("report", ONPREM, "-f", "png", "-o", out)
    assert result.exit_code == 0, result.output
    assert Image.open(out).size[0] == 1300


def test_png_without_a_browser_is_a_clear_error(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CHROMIUM", raising=False)
    result = cli("report", ONPREM, "-f", "png", "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and "needs headless Chromium" in result.stderr
