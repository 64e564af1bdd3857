"""SLURM hostlist expressions: `gpu-[0001-0016,0020]` for many names, and back.

SLURM reads and writes node lists in this form (slurm.conf, topology.conf, `scontrol show hostnames`), so
12,500 nodes fit on one line. Compression keeps the first-seen order of name prefixes and sorts the numbers
under each prefix; a run continues only while the next number, padded to the run's width, is the name's own
digits (so `n9,n10` is `n[9-10]` but `n009,n10` stays two runs, as SLURM does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clusterforge.errors import ClusterforgeError

_TRAILING_DIGITS = re.compile(r"^(.*?)(\d+)$")


def _runs(items: list[tuple[int, str]]) -> list[tuple[int, int, int]]:
    """(low, high, width) runs of consecutive numbers; `items` are (value, digits) sorted by value.

    A number extends a run ending just below it when, padded to that run's width, it is its own digits, so
    `n9,n10` share a run and `009,010` share another even when all four are mixed together.
    """
    runs: list[list[int]] = []
    ending: dict[int, list[int]] = {}  # high end -> runs ending there
    for value, digits in items:
        candidates = ending.get(value - 1, [])
        index = next((i for i in candidates if str(value).zfill(runs[i][2]) == digits), None)
        if index is None:
            runs.append([value, value, len(digits)])
            index = len(runs) - 1
        else:
            candidates.remove(index)
            runs[index][1] = value
        ending.setdefault(value, []).append(index)
    return [(low, high, width) for low, high, width in runs]


def _format_run(low: int, high: int, width: int) -> str:
    first = str(low).zfill(width)
    return first if low == high else f"{first}-{str(high).zfill(width)}"


def compress(names: Iterable[str]) -> str:
    """The shortest SLURM hostlist expression for `names` (duplicates collapse)."""
    groups: dict[str, dict[str, int]] = {}
    literal: list[str] = []
    order: list[tuple[bool, str]] = []  # (is_literal, key) in first-seen order
    for name in names:
        match = _TRAILING_DIGITS.match(name)
        if match is None:
            if name not in literal:
                literal.append(name)
                order.append((True, name))
            continue
        prefix, digits = match.groups()
        if prefix not in groups:
            groups[prefix] = {}
            order.append((False, prefix))
        groups[prefix].setdefault(digits, int(digits))
    parts: list[str] = []
    for is_literal, key in order:
        if is_literal:
            parts.append(key)
            continue
        items = sorted((value, digits) for digits, value in groups[key].items())
        runs = _runs(items)
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            parts.append(key + str(runs[0][0]).zfill(runs[0][2]))
        else:
            parts.append(f"{key}[{','.join(_format_run(*run) for run in runs)}]")
    return ",".join(parts)


def _split_top(expression: str) -> list[str]:
    """Split on commas outside brackets."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in expression:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ClusterforgeError(f"hostlist {expression!r}: ']' without '['")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise ClusterforgeError(f"hostlist {expression!r}: '[' without ']'")
    parts.append(current)
    return [p for p in parts if p]


def _expand_ranges(body: str, expression: str) -> list[str]:
    out: list[str] = []
    for item in body.split(","):
        low, sep, high = item.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise ClusterforgeError(f"hostlist {expression!r}: bad range {item!r}")
        width = len(low)
        end = int(high) if sep else int(low)
        if end < int(low):
            raise ClusterforgeError(f"hostlist {expression!r}: range {item!r} runs backwards")
        out.extend(str(n).zfill(width) for n in range(int(low), end + 1))
    return out


def _expand_one(piece: str, expression: str) -> list[str]:
    start = piece.find("[")
    if start < 0:
        return [piece]
    end = piece.index("]", start)
    head, body, tail = piece[:start], piece[start + 1:end], piece[end + 1:]
    rests = _expand_one(tail, expression)
    return [head + digits + rest for digits in _expand_ranges(body, expression) for rest in rests]


def expand(expression: str) -> list[str]:
    """Every name in a hostlist expression, in the order written (`a[1-2]b[1-2]` is a1b1, a1b2, a2b1, a2b2)."""
    return [name for piece in _split_top(expression.strip()) for name in _expand_one(piece, expression)]
