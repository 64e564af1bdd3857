"""Findings of one rule and one cause as one group: what the text, GitHub and Markdown views print per line.

A 100,000-GPU hall can warn about 4,000 racks for the same reason; a reader needs one line that says so, with
the racks as a hostlist, and must not miss the one error among them. JSON, SARIF and JUnit keep one result per
target: machines read those.

One cause: findings share it when they have the same rule, level and waiver state, point at the same kind of
target (racks, rows, pools, the cluster) and their message and hint are the same text once the target's own
name is taken out. The name is replaced only where the message names it as messages do, after its noun and as a
whole word (`rack r000k00 draws 34.0 kW` becomes `rack {rack} draws 34.0 kW`; a row named `a` leaves the article
in "after a feed loss" alone), so every figure a message states stays in the group's text: two racks that draw
different power never share a line. A group of many reads `each rack draws 34.0 kW` (`its row` in a rack's
message); a group of one keeps its finding's own message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from clusterforge.core.hostlist import cut_to_width
from clusterforge.policies.findings import PoolRef, RackRef, RowRef
from clusterforge.policies.registry import REGISTRY

if TYPE_CHECKING:
    from clusterforge.policies import Finding, Verdict

_RANK = {"error": 0, "warning": 1, "info": 2}
_NOUN = {RackRef: "racks", RowRef: "rows", PoolRef: "pools"}
TARGETS_WIDTH = 60  # characters of hostlist a line shows before `…(+N more)`


@dataclass(frozen=True)
class Group:
    """Findings of one rule and one cause, in the order the engine reported them."""

    rule: str
    level: str
    waived: bool
    noun: str  # "racks", "rows", "pools"; "" for the cluster and the waiver file
    message: str  # `each rack` (`its row`, `each pool`) where each target's name stood, unless the group has one
    hint: str
    reason: str  # the waiver's reason, for waived findings
    findings: tuple[Finding, ...]

    @property
    def count(self) -> int:
        return len(self.findings)

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def label(self) -> str:
        """The level as a reader sees it: `waived` for a waived finding."""
        return "waived" if self.waived else self.level

    def names(self) -> list[str]:
        """The targets' names (rack, row or pool), in the order reported; empty for the cluster."""
        return [name for f in self.findings if (name := _name(f)) is not None]

    def targets(self, width: int = TARGETS_WIDTH) -> str:
        """`racks r000k[00-23],r001k[00-23],…(+4,119 more)`: the targets as a SLURM hostlist, cut after about
        `width` characters at a whole part; `cluster` where the findings are about the cluster as a whole."""
        names = self.names()
        if not names:
            return self.first.group
        cut = cut_to_width(names, width)
        noun = self.noun if cut.total != 1 else self.noun[:-1]
        return f"{noun} {cut.text()}"

    def utilisation(self) -> tuple[float, float] | None:
        """The lowest and highest share of the limit among the findings, where they state one."""
        shares = [share for f in self.findings if (share := f.utilisation) is not None]
        return (min(shares), max(shares)) if shares else None


def _name(f: Finding) -> str | None:
    where = f.where
    if isinstance(where, RackRef):
        return where.rack
    if isinstance(where, RowRef):
        return where.row
    if isinstance(where, PoolRef):
        return where.pool
    return None


def _word_char(char: str) -> bool:
    return char.isalnum() or char in "_-"


def without_name(text: str, noun: str, name: str) -> str:
    """`text` with every `<noun> <name>` where `name` is a whole word written as `<noun> {<noun>}` (`r000k00` in
    `rack r000k001` or `rack r000k00-b` is part of another name and stays; `a` without its noun is a word)."""
    named = f"{noun} {name}"
    if not name or named not in text:
        return text
    out, start = [], 0
    while (at := text.find(named, start)) >= 0:
        end = at + len(named)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if after == "." and end + 1 < len(text):  # `r1.5` is a figure; `r1.` ends a sentence
            after = text[end + 1]
        whole = not _word_char(before) and not _word_char(after)
        out.append(text[start:at] + (f"{noun} {{{noun}}}" if whole else named))
        start = end
    out.append(text[start:])
    return "".join(out)


def _abstract(text: str, f: Finding) -> str:
    """The message or hint with the target's own names as placeholders: the part findings of one cause share."""
    where = f.where
    if isinstance(where, RackRef):
        return without_name(without_name(text, "rack", where.rack), "row", where.row)
    if isinstance(where, RowRef):
        return without_name(text, "row", where.row)
    if isinstance(where, PoolRef):
        return without_name(text, "pool", where.pool)
    return text


def _readable(text: str, where: type) -> str:
    """A group's shared text as a reader sees it: `each rack draws 34.0 kW`, `… in its row`."""
    row = "its row" if where is RackRef else "each row"
    return text.replace("rack {rack}", "each rack").replace("row {row}", row).replace("pool {pool}", "each pool")


def group(verdict: Verdict, show_info: bool = True) -> list[Group]:
    """The verdict's findings by rule and cause: errors first, then warnings, then info, then waived findings;
    within a level a leading rule's first (a unit slip, which other findings follow from), then by rule id and
    where the rule first reported. Info findings only when `show_info`."""
    keyed: dict[tuple[object, ...], list[Finding]] = {}
    texts: dict[tuple[object, ...], tuple[str, str, str]] = {}
    key: tuple[object, ...]
    for f in (*verdict.findings, *verdict.waived):
        if f.level == "info" and not show_info:
            continue
        reason = str((f.waiver or {}).get("reason", "")) if f.waiver is not None else ""
        message, hint = _abstract(f.message, f), _abstract(f.hint, f)
        key = (f.waiver is not None, reason, f.id, f.level, type(f.where), message, hint)
        found = keyed.get(key)
        if found is None:
            keyed[key] = [f]
            texts[key] = (message, hint, reason)
        else:
            found.append(f)
    groups = []
    for key, findings in keyed.items():
        message, hint, reason = texts[key]
        first = findings[0]
        if len(findings) == 1:
            message, hint = first.message, first.hint
        else:
            message, hint = _readable(message, type(first.where)), _readable(hint, type(first.where))
        groups.append(Group(first.id, first.level, first.waiver is not None, _NOUN.get(type(first.where), ""),
                            message, hint, reason, tuple(findings)))
    leading = {rule.id for rule in REGISTRY.values() if rule.leads}  # unit slips: the cause before its effects
    groups.sort(key=lambda g: (g.waived, _RANK.get(g.level, 3), g.rule not in leading, g.rule, g.first.file,
                               g.first.line))
    return groups


def counted(g: Group) -> str:
    """`×4,167 racks r000k[00-23],…(+4,119 more)` for a group of many, the one target's label for a group of one."""
    if g.count == 1:
        return g.first.group
    return f"×{g.count:,} {g.targets()}"


def location(g: Group) -> str:
    """Where the group's first finding is (`hall.yaml:25`), with `, …` when its findings are in more places. A
    finding of no line is at its file alone (`hall.yaml`), one of no file at neither (empty, or `line 3`), as
    Problem.render writes them: never a made-up `:0` or file name."""
    from clusterforge.core.errors import NO_FILE
    from clusterforge.files.paths import report_path

    first = g.first
    if first.file in ("", NO_FILE):
        here = f"line {first.line}" if first.line else ""
    else:
        here = f"{report_path(first.file)}:{first.line}" if first.line else report_path(first.file)
    same = all((f.file, f.line) == (first.file, first.line) for f in g.findings)
    return here if same else f"{here or 'no file'}, …"


def use(g: Group) -> str:
    """The share of the limit (`99%`), or its range over the group (`97–99%`); empty where none is stated."""
    shares = g.utilisation()
    if shares is None:
        return ""
    low, high = (f"{share:.0%}" for share in shares)
    return high if low == high else f"{low.removesuffix('%')}–{high}"
