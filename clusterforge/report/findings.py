"""The report's findings, one line per rule and level: a hall of thousands of racks can raise the same warning on
every rack, and a reviewer needs the rule, how often and where first, not four thousand table rows.

A place links to its rack only when the page draws that rack, so no link on the page leads nowhere.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from clusterforge.policies.findings import Finding, RackRef

FIRST_PLACES = 3  # places named on the rule's line
LISTED = 100  # findings listed when the line is opened; `clusterforge check` lists every one


@dataclass(frozen=True)
class Place:
    """Where one finding is: `file:line`, and its rack's anchor when the page draws that rack."""

    where: str
    rack: str | None  # the rack's name when it is drawn (the link target `#rack-NAME`), else None
    undrawn: str | None  # the rack's name when it is not drawn on this page

    @property
    def label(self) -> str:
        """The rack's name when there is one (a compact hall gives many racks one line), else `file:line`."""
        return self.rack or self.undrawn or self.where


@dataclass(frozen=True)
class Item:
    place: Place
    message: str
    hint: str


@dataclass(frozen=True)
class RuleLine:
    """Every finding of one rule at one level (error, warning or waived)."""

    id: str
    level: str
    count: int
    first: tuple[Place, ...]  # the first FIRST_PLACES places
    message: str  # the first finding's message and hint stand for the rest
    hint: str
    items: tuple[Item, ...]  # the first LISTED findings, shown when the line is opened

    @property
    def anchor(self) -> str:
        """The id of this line's table row, `finding-PWR-002-warning`: the header's chip for the rule links here,
        and the id stays the same from run to run, so a link into a report keeps working when it is rebuilt."""
        return f"finding-{self.id}-{self.level}"

    @property
    def more(self) -> int:
        """Findings the opened line does not list."""
        return self.count - len(self.items)


def summarise(findings: Iterable[tuple[Finding, str]], drawn: Collection[str]) -> list[RuleLine]:
    """(finding, level shown) pairs grouped by rule and level, errors first, in the order the rules first appear."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding, level in findings:
        groups.setdefault((level, finding.id), []).append(finding)
    order = {"error": 0, "warning": 1, "waived": 2}
    lines = []
    for (level, rule), found in sorted(groups.items(), key=lambda kv: order.get(kv[0][0], 3)):
        items = tuple(Item(_place(f, drawn), f.message, f.hint) for f in found[:LISTED])
        lines.append(RuleLine(rule, level, len(found), tuple(i.place for i in items[:FIRST_PLACES]),
                              found[0].message, found[0].hint, items))
    return lines


def _place(finding: Finding, drawn: Collection[str]) -> Place:
    rack = finding.where.rack if isinstance(finding.where, RackRef) else None
    where = f"{finding.file}:{finding.line}"
    if rack is None:
        return Place(where, None, None)
    return Place(where, rack, None) if rack in drawn else Place(where, None, rack)
