"""Counts in words for the report: `1 error`, `2 errors`, `1,234 racks`, `1 more is`.

The page says how many of something there are in dozens of places, from one to millions; a count followed by a
bare plural ("1 errors") reads as a bug, so every counted noun on the page goes through here.
"""

from __future__ import annotations


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`n` (with thousands separators) and `word`, or its plural when `n` is not one (`word + "s"` unless given:
    `counted(3, "switch", "switches")`)."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def agree(n: int, singular: str, plural: str) -> str:
    """The verb (or any word) that agrees with a count of `n`: `agree(1, "is", "are")` is "is"."""
    return singular if n == 1 else plural
