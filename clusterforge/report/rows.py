"""The rows table and which racks the page draws.

A generated hall repeats one row design hundreds of times; the table shows a run of identical rows as one line
("rows r000–r172, 173 rows, each ...") so the elevations are not pushed below a screen-filling table. What is
identical is what the table prints: racks, IT kW and both cooling bars as they read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


def racks_to_draw(names: Sequence[str], errors: dict[str, int], warnings: dict[str, int], limit: int) -> set[str]:
    """At most `limit` racks: those with errors first, then those with warnings, then the rest, in hall order
    within each; the page then draws them in hall order. A reviewer of a big hall sees the failing racks drawn."""
    if len(names) <= limit:
        return set(names)
    ranked = sorted(range(len(names)), key=lambda i: (0 if errors.get(names[i]) else
                                                      1 if warnings.get(names[i]) else 2, i))
    return {names[i] for i in ranked[:limit]}
