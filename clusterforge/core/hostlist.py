"""SLURM hostlist expressions: `gpu-[0001-0016,0020]` for many names, and back.

SLURM reads and writes node lists in this form (slurm.conf, topology.conf, `scontrol show hostnames`), so
12,500 nodes fit on one line. Compression keeps the first-seen order of name prefixes and sorts the numbers
under each prefix; a run continues only while the next number, padded to the run's width, is the name's own
digits (so `n9,n10` is `n[9-10]` but `n009,n10` stays two runs, as SLURM does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, shown

_TRAILING_DIGITS = re.compile(r"^(.*?)(\d+)$")
_DIGITS_MAX = 18  # a node number is far shorter; longer ones would be slow to convert


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
    return ",".join(part for part, _ in compress_parts(names))


@dataclass(frozen=True)
class HostlistCut:
    """The leading parts of a hostlist that fit a width, and how many names the parts left out stand for: how
    check's groups, diff's hosts and health perf's outliers show thousands of nodes on part of a line."""

    parts: tuple[str, ...]
    left: int  # names the parts not shown stand for
    total: int

    def text(self, parts: Iterable[str] | None = None) -> str:
        """`gpu-[0001-0128],ctl-0001,…(+40 more)`: the parts shown (or PARTS in their place), then what is left."""
        return ",".join(self.parts if parts is None else parts) + (f",…(+{self.left:,} more)" if self.left else "")


def cut_to_width(names: Iterable[str], width: int) -> HostlistCut:
    """The parts of `compress(names)` that fit in about `width` characters, whole: the first always, however long
    (the caller decides whether to shorten it), then each next one while the text so far stays within `width`."""
    parts = compress_parts(names)
    shown: list[str] = []
    length = covered = 0
    for text, many in parts:
        if shown and length + len(text) > width:
            break
        shown.append(text)
        length += len(text) + 1
        covered += many
    total = sum(many for _, many in parts)
    return HostlistCut(tuple(shown), total - covered, total)


def compress_parts(names: Iterable[str]) -> list[tuple[str, int]]:
    """`compress(names)` as its comma-separated parts, each with how many names it stands for, so a report
    can show the first few parts and say how many names it left out."""
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
    parts: list[tuple[str, int]] = []
    for is_literal, key in order:
        if is_literal:
            parts.append((key, 1))
            continue
        items = sorted((value, digits) for digits, value in groups[key].items())
        runs = _runs(items)
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            parts.append((key + str(runs[0][0]).zfill(runs[0][2]), 1))
        else:
            parts.append((f"{key}[{','.join(_format_run(*run) for run in runs)}]", len(items)))
    return parts


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
                raise ClusterforgeError(f"hostlist {shown(expression)}: ']' without '['")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth:
        raise ClusterforgeError(f"hostlist {shown(expression)}: '[' without ']'")
    parts.append(current)
    return [p for p in parts if p]


def _ranges(body: str, expression: str) -> list[tuple[int, int, int]]:
    """The (low, high, width) ranges of one bracket, checked: numbers of at most _DIGITS_MAX digits, ascending."""
    out: list[tuple[int, int, int]] = []
    for item in body.split(","):
        low, sep, high = item.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()) or not low.isascii() or not high.isascii():
            raise ClusterforgeError(f"hostlist {shown(expression)}: bad range {shown(item)}")
        if len(low) > _DIGITS_MAX or len(high) > _DIGITS_MAX:
            raise ClusterforgeError(f"hostlist {shown(expression)}: a number of more than {_DIGITS_MAX} digits")
        end = int(high) if sep else int(low)
        if end < int(low):
            raise ClusterforgeError(f"hostlist {shown(expression)}: range {shown(item)} runs backwards")
        out.append((int(low), end, len(low)))
    return out


def _brackets(piece: str, expression: str) -> list[str | list[tuple[int, int, int]]]:
    """A piece as its literal text and its brackets' ranges, in order (`a[1-2]b` is 'a', [(1, 2, 1)], 'b')."""
    parts: list[str | list[tuple[int, int, int]]] = []
    while (start := piece.find("[")) >= 0:
        end = piece.index("]", start)
        parts += [piece[:start], _ranges(piece[start + 1:end], expression)]
        piece = piece[end + 1:]
    return [*parts, piece]


def count(expression: str) -> int:
    """How many names a hostlist expression stands for, worked out without listing them."""
    total = 0
    for piece in _split_top(expression.strip()):
        names = 1
        for part in _brackets(piece, expression):
            if not isinstance(part, str):
                names *= sum(high - low + 1 for low, high, _ in part)
        total += names
    return total


def expand(expression: str, limit: int | None = None) -> list[str]:
    """Every name in a hostlist expression, in the order written (`a[1-2]b[1-2]` is a1b1, a1b2, a2b1, a2b2).

    An expression of a few bytes can stand for billions of names, so the names are counted first: more than
    `limit` (limits.NODES by default) is an input problem."""
    bound = limits.NODES.value if limit is None else limit
    found = count(expression)
    if found > bound:
        raise ClusterforgeError(Problem(f"the hostlist {shown(expression)} names {found:,} nodes, over the limit of "
                                        f"{bound:,}", hint=limits.NODES.hint()))
    names: list[str] = []
    for piece in _split_top(expression.strip()):
        stems = [""]
        for part in _brackets(piece, expression):
            if isinstance(part, str):
                stems = [stem + part for stem in stems]
            else:
                stems = [stem + str(n).zfill(width) for stem in stems for low, high, width in part
                         for n in range(low, high + 1)]
        names += stems
    return names
