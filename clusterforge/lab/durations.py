"""How long the lab's one-off steps took on this machine, so their announcements say it honestly.

A first base image or bake takes a while and a fixed promise ("about a minute") is wrong on most machines: the
step's announcement names what it took here last time (or, on a first run, what it takes on the 2-core machine
the lab is measured on) and its end names what it took now. Kept next to the lab's shared caches.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from clusterforge.files.atomic import write_text
from clusterforge.lab.paths import shared_cache

Say = Callable[[str], None]

# What each step took on the reference machine (2 cores, Debian mirror over the internet): benchmarks/README.md.
FIRST_RUN = {
    "mmdebstrap": "about 20 s on 2 cores, mostly downloads",
    "bake": "3-4 minutes on 2 cores",
}


def _file() -> Path:
    return shared_cache() / "durations.json"


def _load() -> dict[str, float]:
    try:
        loaded = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(k): float(v) for k, v in loaded.items() if isinstance(v, int | float)}


def expected(step: str) -> str:
    """What to expect: the last time measured here, else the reference machine's figure."""
    last = _load().get(step)
    if last is not None:
        return f"took {last:.0f} s here last time"
    return FIRST_RUN.get(step, "minutes")


def record(step: str, seconds: float) -> None:
    known = _load()
    known[step] = round(seconds, 1)
    path = _file()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(known, indent=2, sort_keys=True) + "\n")


@contextmanager
def timed(step: str, say: Say | None, announcement: str) -> Iterator[None]:
    """Announce `announcement` with what to expect, run the step, then say and record what it took (only when
    it succeeded: a failed bake's time says nothing about the next)."""
    if say:
        say(f"{announcement} ({expected(step)})")
    started = time.monotonic()
    yield
    seconds = time.monotonic() - started
    record(step, seconds)
    if say:
        say(f"{step} done in {seconds:.0f} s")
