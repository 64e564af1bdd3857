"""Headless Chromium: PNG of the rack elevations for pull-request comments (and the report's own tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from clusterforge.errors import ClusterforgeError

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1")


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


def screenshot(html: str, out: Path, width: int, height: int) -> None:
    """Render `html` at width × height and write a PNG to `out` (atomically)."""
    from clusterforge.atomic import write_bytes

    with tempfile.TemporaryDirectory(prefix="cf-shot-") as work:
        page = Path(work) / "page.html"
        page.write_text(html, encoding="utf-8")
        png = Path(work) / "shot.png"
        result = run([f"--screenshot={png}", f"--window-size={width},{height}", page.as_uri()])
        if not png.exists():
            raise ClusterforgeError(f"Chromium made no screenshot: {result.stderr.strip()[-300:]}")
        write_bytes(out, png.read_bytes())
