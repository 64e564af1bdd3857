"""Headless Chromium: PNG of the rack elevations for pull-request comments (and the report's own tests).

The PNG is the element that holds the page's header and drawings, shot at its real size through Playwright
driving the system's Chromium (no browser download): the page decides how racks wrap, so nothing here guesses
a height. An element taller than MAX_PART pixels is cut into parts of at most that height, between racks,
written as NAME.png, NAME-2.png, ...: one tall image is hard to view and costs memory in proportion to its area.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge.core.errors import ClusterforgeError

if TYPE_CHECKING:
    from playwright.sync_api import FloatRect

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1")
WIDTH = 1300  # the viewport a PR comment shows well: five racks to a line
MAX_PART = 16_000  # px: under Chromium's 16,384 px texture limit, and a height image viewers show whole
CAPTURE = "#capture"  # the page's header and drawings (page.html.j2)
# Where a part may end: above a section, a row's title or a rack card (so no rack is cut in two).
CUTS_JS = """(sel) => {
  const root = document.querySelector(sel).getBoundingClientRect();
  const tops = [...document.querySelectorAll(sel + ' section, ' + sel + ' .row-title, ' + sel + ' .rack-card, '
                + sel + ' .pool-card')].map(e => e.getBoundingClientRect().top - root.top - 4);
  return {x: root.left + scrollX, y: root.top + scrollY, width: root.width, height: root.height, cuts: tops};
}"""


def find_browser() -> str:
    """CHROMIUM, or the first Chromium/Chrome on PATH."""
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise ClusterforgeError("PNG output needs headless Chromium: install it (Debian/Ubuntu: apt-get install "
                            "chromium) or set CHROMIUM to the browser's path")


def run(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the browser with a throwaway profile and the flags that keep it off the network."""
    with tempfile.TemporaryDirectory(prefix="cf-chromium-") as profile:
        command = [find_browser(), *FLAGS, f"--user-data-dir={profile}", *args]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise ClusterforgeError(f"Chromium did not finish within {timeout:.0f} s") from None


@dataclass(frozen=True)
class Shot:
    """The element's size in CSS pixels (= PNG pixels: scale 1) and its PNG parts, top to bottom."""

    width: int
    height: int
    pngs: tuple[bytes, ...]

    def files(self, out: Path) -> tuple[Path, ...]:
        return tuple(part_path(out, i) for i in range(len(self.pngs)))

    def write(self, out: Path) -> tuple[Path, ...]:
        """Each part to its file (atomically): `out`, then NAME-2.png, ..."""
        from clusterforge.files.atomic import write_bytes

        files = self.files(out)
        for path, data in zip(files, self.pngs, strict=True):
            write_bytes(path, data)
        return files


def part_path(out: Path, index: int) -> Path:
    """The file of part `index` (0-based): `out` itself, then NAME-2.png, NAME-3.png, ..."""
    return out if index == 0 else out.with_name(f"{out.stem}-{index + 1}{out.suffix}")


def parts(height: int, cuts: list[float], limit: int = MAX_PART) -> list[tuple[int, int]]:
    """(top, height) of each part: as few as fit `limit`, each ending where a rack or section begins when one
    does within reach, else at the limit (a single drawing taller than the limit)."""
    out: list[tuple[int, int]] = []
    top = 0
    marks = sorted({int(c) for c in cuts if 0 < c < height})
    while height - top > limit:
        reach = [c for c in marks if top < c <= top + limit]
        end = reach[-1] if reach and reach[-1] > top + limit // 4 else top + limit
        out.append((top, end - top))
        top = end
    out.append((top, height - top))
    return out


def capture(html: str, selector: str = CAPTURE, width: int = WIDTH, timeout: float = 120) -> Shot:
    """Load `html` in the system Chromium at `width` px and shoot the element `selector` at its real size, as
    one PNG or, taller than MAX_PART, as parts cut between racks."""
    browser = find_browser()
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        raise ClusterforgeError("PNG output needs the Python package playwright (pip install playwright; "
                                "it drives the system Chromium, no browser download)") from None
    with tempfile.TemporaryDirectory(prefix="cf-shot-") as work:
        page_file = Path(work) / "page.html"
        page_file.write_text(html, encoding="utf-8")
        try:
            with sync_playwright() as p:
                chromium = p.chromium.launch(executable_path=browser, timeout=timeout * 1000,
                                             args=[f for f in FLAGS if f != "--headless"])
                try:
                    page = chromium.new_page(viewport={"width": width, "height": 900}, device_scale_factor=1)
                    page.goto(page_file.as_uri(), timeout=timeout * 1000)
                    box: dict[str, Any] = page.evaluate(CUTS_JS, selector)
                    height = round(box["height"])
                    shots = []
                    for top, tall in parts(height, box["cuts"], MAX_PART):
                        clip: FloatRect = {"x": box["x"], "y": box["y"] + top, "width": box["width"],
                                           "height": tall}
                        shots.append(page.screenshot(clip=clip, full_page=True, timeout=timeout * 1000))
                finally:
                    chromium.close()
        except Error as exc:
            raise ClusterforgeError(f"Chromium made no screenshot: {str(exc).strip()[-300:]}") from None
    return Shot(round(box["width"]), height, tuple(shots))
