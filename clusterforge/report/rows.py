"""The rows table, and which racks the page draws in which order.

A generated hall repeats one row design hundreds of times; the table shows a run of identical rows as one line
("rows r000–r172, 173 rows, each ...") so the elevations are not pushed below a screen-filling table. What is
identical is what the table prints: racks, IT kW and both cooling bars as they read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Protocol


class Shown(Protocol):
    """A bar as the table prints it (report.Bar)."""

    @property
    def text(self) -> str: ...

    @property
    def css(self) -> str: ...

    @property
    def share(self) -> float: ...


@dataclass(frozen=True)
class Row:
    name: str
    racks: int
    kw: float
    room: Shown
    liquid: Shown

    @property
    def key(self) -> tuple[object, ...]:
        """What the table prints for this row, down to the bars' drawn widths."""
        return (self.racks, f"{self.kw:.1f}", self.room.text, self.room.css, round(min(self.room.share, 1), 3),
                self.liquid.text, self.liquid.css, round(min(self.liquid.share, 1), 3))


@dataclass(frozen=True)
class RowGroup:
    """One line of the table: a row, or a run of consecutive rows that print the same."""

    first: Row
    names: tuple[str, ...]

    @property
    def label(self) -> str:
        if len(self.names) == 1:
            return self.names[0]
        return f"rows {self.names[0]}–{self.names[-1]} ({len(self.names)} rows, each)"

    @property
    def count(self) -> int:
        return len(self.names)


def group_rows(rows: Iterable[Row]) -> list[RowGroup]:
    """Consecutive rows with the same printed figures, as one line each."""
    groups: list[RowGroup] = []
    for row in rows:
        if groups and groups[-1].first.key == row.key:
            groups[-1] = RowGroup(groups[-1].first, (*groups[-1].names, row.name))
        else:
            groups.append(RowGroup(row, (row.name,)))
    return groups


STANDINGS = ("failing", "warning", "passing")  # the order the page draws racks in: what fails leads
STANDING_WORDS = {"failing": "failing", "warning": "with warnings", "passing": "passing"}  # as the page says it


def standing(name: str, errors: Mapping[str, int], warnings: Mapping[str, int]) -> str:
    """failing (an unwaived error), warning (an unwaived warning) or passing (nothing, or only waived findings:
    a waiver is an accepted finding, and the findings table still lists it)."""
    return "failing" if errors.get(name) else "warning" if warnings.get(name) else "passing"


def racks_to_draw(names: Sequence[str], errors: Mapping[str, int], warnings: Mapping[str, int],
                  limit: int) -> list[str]:
    """At most `limit` racks in the order the page draws them: failing first, then warning, then passing, in hall
    order within each (a stable sort). A reviewer of a hall with two failing racks sees those two first, not eight
    green racks; in a hall of thousands the cap keeps the racks with findings."""
    rank = {s: i for i, s in enumerate(STANDINGS)}
    return sorted(names, key=lambda name: rank[standing(name, errors, warnings)])[:limit]


@dataclass(frozen=True)
class RackBlock:
    """Racks drawn together under one title: consecutive drawn racks of one standing in one row."""

    standing: str
    row: str
    racks: tuple[str, ...]


def rack_blocks(drawn: Iterable[tuple[str, str, str]]) -> list[RackBlock]:
    """(rack, row, standing) in drawing order as blocks: a row whose racks differ in standing appears once per
    standing, so the row stays named on every rack while the failing ones lead."""
    return [RackBlock(state, row, tuple(rack for rack, _, _ in racks))
            for (row, state), racks in groupby(drawn, key=lambda d: (d[1], d[2]))]
