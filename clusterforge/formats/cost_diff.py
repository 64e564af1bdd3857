"""What a change does to the cost, item by item: the view a pull-request comment shows (`cost --diff`,
`diff -f markdown`), as text, JSON and Markdown.

Reviewers know the shape from Infracost's PR comment: each priced item's cost before, after and the difference,
then the totals. Here the items are `clusterforge cost`'s lines (one per pool, file system, kind of switch:
O(pools), never one per node), matched by item and period: monthly lines apart from one-off purchases, since
adding a month to a purchase means nothing. The monthly total is the estimate's own (recurring lines plus the
purchase amortised), so the row that makes up the gap is shown instead of leaving the column not adding up.
What the catalog has no price for (`CostEstimate.unpriced`) is named on its own line: a total that leaves an
item out must say so, not count it as $0.

The PR gate's comment starts with MARKER, an HTML comment GitHub does not show, by which the gate finds its own
comment and edits that one on each push instead of adding another. The gate writes it once, above the section each
changed blueprint gets (action.yml, `Price the change`), so the section this module writes carries none: a second
copy per blueprint would leave a comment with the marker as many times as blueprints. Every string from the input
(item names, the blueprints' paths or REV:PATH, which a pull request names) is written as literal text
(escape.markdown_safe: backslashes, never HTML entities) or a code span (escape.markdown_code); the figures are
plain, so the Markdown reads as text too (a notification email, the job summary's source). A commit named by its
full hash in REV:PATH is shown by its first seven characters, as git and GitHub show it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterforge.cost.model import CostEstimate, PerGpuHour
from clusterforge.formats.escape import log_line, markdown_code, markdown_safe

MARKER = "<!-- clusterforge-cost-diff -->"  # the gate's comment: written once by the gate, not by markdown()
SHORT = 7  # a commit's hash as git's --short and GitHub show it
_FULL_HASH = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})(?=:)")  # REV:PATH whose REV is a whole SHA-1 or SHA-256
PERIODS = (("month", "monthly"), ("once", "one-off"))
UNPRICED = "unpriced"  # a side has the item but the catalog no price for it: no figure at all, never $0
UNKNOWN = "unknown"  # the difference where a side is unpriced


State = str  # "priced" | "unpriced" (the side has the item, with no price) | "absent" (the side has no such item)


@dataclass(frozen=True)
class ItemChange:
    """One item's cost for its period in OLD and NEW (None: the side has no such item, or no price for it). An
    item whose name changed with the change (`FSx ... 50,400 GiB` grown to `60,000 GiB`, a pool's instance type) is
    one ItemChange: `item` is NEW's name, `old_item` OLD's."""

    item: str
    period: str  # "month" | "once"
    before: float | None
    after: float | None
    old_item: str | None = None  # OLD's name where it differs
    before_state: State = "priced"
    after_state: State = "priced"
    unchanged: bool = False  # unpriced on both sides, as many of it: whatever it costs, it costs the same

    @property
    def delta(self) -> float | None:
        """NEW minus OLD; None where a side has the item without a price (the difference is not known), unless
        both have as many of it without a price (then nothing changed: 0)."""
        if self.unchanged:
            return 0.0
        if "unpriced" in (self.before_state, self.after_state):
            return None
        return (self.after or 0.0) - (self.before or 0.0)

    @property
    def name(self) -> str:
        """NEW's name, and where OLD's differs, what it was: `p5e.48xlarge capacity-block, pool gpu (was
        p5.48xlarge)` (the words the two names do not share)."""
        if self.old_item is None or self.old_item == self.item:
            return self.item
        return f"{self.item} (was {was(self.old_item, self.item)})"


def was(old: str, new: str) -> str:
    """The words of `old` that `new` does not share at either end (the whole of `old` when they share none)."""
    before, after = old.split(" "), new.split(" ")
    lead = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), min(len(before),
                                                                                                 len(after)))
    tail = 0
    while tail < min(len(before), len(after)) - lead and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    middle = " ".join(before[lead:len(before) - tail]).strip(" ,;")
    return middle if middle and (lead or tail) else old


@dataclass(frozen=True)
class CostDiff:
    """Two estimates (OLD, NEW) of one cluster and what they name OLD and NEW by (a path, or REV:PATH)."""

    old_name: str
    new_name: str
    old: CostEstimate
    new: CostEstimate

    def items(self, period: str) -> list[ItemChange]:
        """The lines of `period` matched by item: OLD's order, then the items only NEW has. An item whose name
        changed is matched by what it is: the one line of OLD and the one of NEW left unmatched with the same
        category, unit and pool (a pool's line with its new instance type, a file system at its new size) are one
        change, not one removed and one added. An item named twice on one side (it should not be) is summed, so
        no dollar goes missing; a side with the item but no price for it is `unpriced`, never $0."""
        before, after = _side(self.old, period), _side(self.new, period)
        paired: dict[str, str] = {}  # NEW's name -> OLD's, for the renamed
        only_old = [name for name in before if name not in after]
        only_new = [name for name in after if name not in before]
        for identity in dict.fromkeys(before[name].identity for name in only_old):
            olds = [n for n in only_old if before[n].identity == identity]
            news = [n for n in only_new if after[n].identity == identity]
            if len(olds) == 1 and len(news) == 1:
                paired[news[0]] = olds[0]
        renamed = set(paired.values())
        out: list[ItemChange] = []
        for name in dict.fromkeys([*before, *after]):
            if name in paired or (name in renamed and name not in after):
                if name in renamed:  # OLD's place in the order, NEW's name
                    new_name = next(n for n, o in paired.items() if o == name)
                    out.append(_change(new_name, period, before[name], after[new_name], name))
                continue
            out.append(_change(name, period, before.get(name), after.get(name)))
        return out

    def amortised(self, estimate: CostEstimate) -> float:
        """What the monthly total holds beyond its monthly lines: the purchase amortised per month."""
        return estimate.monthly_usd - sum(line.total_usd for line in estimate.lines if line.period == "month")

    def partial(self, estimate: CostEstimate, period: str) -> bool:
        """The side's total for `period` is a floor, not the cost, in a way the difference depends on: it leaves out
        an item without a price that the other side does not leave out the same (the monthly total holds the
        purchase amortised, so a one-off item counts there too)."""
        return bool(_unpriced(estimate, period) - _unpriced(self.new if estimate is self.old else self.old, period))

    def total_cells(self, period: str, before: float, after: float) -> tuple[str, str, str]:
        """A total's before, after and difference as shown: `at least $X` on a side that leaves an item out, and
        then the difference `unknown` (it could be anything), else the difference with its percentage."""
        old, new = self.partial(self.old, period), self.partial(self.new, period)
        if old or new:
            return at_least(before, old), at_least(after, new), UNKNOWN
        return usd(before), usd(after), f"{signed(after - before)}{percent(before, after)}"

    def totals(self) -> list[tuple[str, float, float]]:
        """(label, before, after) for the monthly and one-off totals."""
        return [("monthly total", self.old.monthly_usd, self.new.monthly_usd),
                ("one-off total", self.old.capex_usd, self.new.capex_usd)]

    def unpriced(self) -> list[tuple[str, str]]:
        """Each item no price covers with where: `before and after`, `after only` (the change adds it) or
        `before only`."""
        old, new = set(self.old.unpriced), set(self.new.unpriced)
        names = list(dict.fromkeys([*self.old.unpriced, *self.new.unpriced]))
        return [(name, "before and after" if name in old and name in new else
                 "after only" if name in new else "before only") for name in names]

    def as_json(self) -> dict[str, object]:
        """Every item with its cost before and after and the difference: null where a side has no price for it
        (`before_state`/`after_state` `unpriced`) or no such item (`absent`), never 0; `before_item` is OLD's name
        (the item's own unless the change renamed it)."""
        return {
            "old": self.old_name, "new": self.new_name, "currency": self.new.currency,
            "items": [{"item": c.item, "before_item": c.old_item or (c.item if c.before_state != "absent" else None),
                       "period": c.period, "before_usd": c.before, "after_usd": c.after, "delta_usd": c.delta,
                       "before_state": c.before_state, "after_state": c.after_state}
                      for period, _ in PERIODS for c in self.items(period)],
            "monthly": _triple(self.old.monthly_usd, self.new.monthly_usd),
            "once": _triple(self.old.capex_usd, self.new.capex_usd),
            "usd_per_gpu_hour": {"before": self.old.usd_per_gpu_hour, "after": self.new.usd_per_gpu_hour},
            "unpriced": [{"item": name, "where": where} for name, where in self.unpriced()],
        }


def _unpriced(estimate: CostEstimate, period: str) -> set[tuple[str, float]]:
    """The items of `period` (for `month`: of every period) without a price, with their quantities."""
    return {(line.item, line.quantity) for line in estimate.lines
            if not line.priced and (period == "month" or line.period == period)}


@dataclass
class _Side:
    """One side's lines of one item: their total, whether every one is priced, what identifies the item, and how
    many of it there are."""

    usd: float
    priced: bool
    identity: tuple[str, str, str]
    quantity: float = 0.0


def _side(estimate: CostEstimate, period: str) -> dict[str, _Side]:
    out: dict[str, _Side] = {}
    for line in estimate.lines:
        if line.period != period:
            continue
        found = out.setdefault(line.item, _Side(0.0, True, (line.category, line.unit, line.pool)))
        found.usd += line.total_usd if line.priced else 0.0
        found.priced = found.priced and line.priced
        found.quantity += line.quantity
    return out


def _change(item: str, period: str, before: _Side | None, after: _Side | None, old_item: str | None = None
            ) -> ItemChange:
    def state(side: _Side | None) -> State:
        return "absent" if side is None else "priced" if side.priced else "unpriced"

    same = before is not None and after is not None and not before.priced and not after.priced and \
        before.quantity == after.quantity and old_item is None
    return ItemChange(item, period, before.usd if before is not None and before.priced else None,
                      after.usd if after is not None and after.priced else None, old_item, state(before),
                      state(after), same)


def _triple(before: float, after: float) -> dict[str, float]:
    return {"before_usd": before, "after_usd": after, "delta_usd": after - before}


def usd(value: float | None, state: State = "priced") -> str:
    """$1,234.56; `-` for an item a side does not have; `unpriced` for one it has without a price."""
    if state == "unpriced":
        return UNPRICED
    if value is None:
        return "-"
    return f"{'-' if round(value, 2) < 0 else ''}${abs(value):,.2f}"


def signed(value: float | None) -> str:
    """+$1,234.56 / -$1,234.56 / $0.00: the difference, its sign always written; `unknown` where a side has no
    price."""
    if value is None:
        return UNKNOWN
    if round(value, 2) == 0:
        return "$0.00"
    return f"{'+' if value > 0 else '-'}${abs(value):,.2f}"


def percent(before: float, after: float) -> str:
    """` (+50%)`, empty where there is nothing to divide by."""
    if not before:
        return ""
    share = (after - before) / before * 100
    return f" ({'+' if share >= 0 else '-'}{abs(share):.0f}%)"


def at_least(value: float, partial: bool) -> str:
    """A total: `at least $X` where it leaves an item without a price out."""
    return f"at least {usd(value)}" if partial else usd(value)


def per_gpu_hour(ratio: PerGpuHour, partial: bool = False) -> str:
    """`$4.9461`; `at least $X` on a side that leaves out an item the other does not; `withheld` where no GPU of
    the side has a price (cost/ratios.py), `-` where it has no GPU."""
    if ratio.usd is None:
        return "withheld" if ratio.withheld else "-"
    return f"{'at least ' if partial else ''}${ratio.usd:,.4f}"


def short(name: str) -> str:
    """REV:PATH with a whole commit hash as REV (the gate's base commit) shortened to SHORT characters; any other
    name as it is."""
    return _FULL_HASH.sub(lambda m: m.group(1)[:SHORT], name)


def gpu_hour_notes(diff: CostDiff) -> list[str]:
    """What a side's $/GPU-hour divides by where it is not every GPU, and why it is withheld where it is: `after:
    over the 128 priced GPUs (128 GPUs of pool burst unpriced)`."""
    notes = []
    for side, estimate in (("before", diff.old), ("after", diff.new)):
        ratio = estimate.per_gpu_hour
        if ratio.withheld or ratio.left_out:
            notes.append(f"{side}: {ratio.withheld or ratio.over()}")
    return notes


def headline(diff: CostDiff, arrow: str = "->") -> str:
    """`monthly $A -> $B (+$C, +P%)`: the one figure a reviewer reads first (figures only: no input in it); with
    an item not priced on a side, that side is `at least` and the difference unknown."""
    old, new = diff.old.monthly_usd, diff.new.monthly_usd
    before, after, change = diff.total_cells("month", old, new)
    if change == UNKNOWN:
        return f"monthly {before} {arrow} {after} (difference unknown: an item has no price)"
    share = percent(old, new).strip(" ()")
    return f"monthly {before} {arrow} {after} ({signed(new - old)}{', ' + share if share else ''})"


def markdown(diff: CostDiff) -> str:
    """One blueprint's section of the pull-request comment (the gate writes MARKER once above the sections): a
    heading naming both sides, the monthly and one-off items as tables (before, after, difference), the totals,
    $/GPU-hour before and after with what each divides by where that is not every GPU, and what is not priced."""
    out = [f"### clusterforge cost: {markdown_code(short(diff.old_name))} → {markdown_code(short(diff.new_name))}", "",
           f"**{headline(diff, '→')}**, per GPU-hour {_gpu_hours(diff, ' → ').rsplit(' → ', 1)[0]} "
           f"({markdown_safe(diff.new.currency)}; an estimate from list prices, not an invoice)", ""]
    totals = dict((label, (before, after)) for label, before, after in diff.totals())
    for period, label in PERIODS:
        items = diff.items(period)
        before, after = totals[f"{label} total"]
        if not items and not before and not after:
            continue
        out += [f"| {label} item | before | after | difference |", "|---|--:|--:|--:|"]
        out += [f"| {markdown_safe(c.name)} | {usd(c.before, c.before_state)} | {usd(c.after, c.after_state)} | "
                f"{signed(c.delta)} |" for c in items]
        if period == "month":
            amortised_before, amortised_after = diff.amortised(diff.old), diff.amortised(diff.new)
            if round(amortised_before, 2) or round(amortised_after, 2):
                out.append(f"| purchase amortised per month | {usd(amortised_before)} | {usd(amortised_after)} | "
                           f"{signed(amortised_after - amortised_before)} |")
        old, new, change = diff.total_cells(period, before, after)
        change = f"**{change}**" if change == UNKNOWN else f"**{signed(after - before)}**{percent(before, after)}"
        out.append(f"| **{label} total** | **{old}** | **{new}** | {change} |")
        if period == "month" and _has_gpu_hours(diff):  # a row of the table: its cells are read apart
            out.append(f"| per GPU-hour | {_gpu_hours(diff, ' | ')} |")
        out.append("")
    notes = gpu_hour_notes(diff)
    out += [f"Per GPU-hour {markdown_safe('; '.join(notes))}.", ""] if notes else []
    unpriced = diff.unpriced()
    if unpriced:
        named = ", ".join(f"{markdown_code(name)} ({where})" for name, where in unpriced)
        out += [f"**Not priced** (no price in the catalog; in no total above): {named}", ""]
    out.append("Each line's price, source and date: `clusterforge cost FILE`.")
    return "\n".join(out) + "\n"


def _has_gpu_hours(diff: CostDiff) -> bool:
    """A side has a $/GPU-hour figure, or withholds one."""
    return any(e.per_gpu_hour.usd or e.per_gpu_hour.withheld for e in (diff.old, diff.new))


def _gpu_hour_delta(diff: CostDiff) -> str:
    old, new = diff.old.usd_per_gpu_hour, diff.new.usd_per_gpu_hour
    if old is None or new is None:
        return UNKNOWN if diff.old.per_gpu_hour.withheld or diff.new.per_gpu_hour.withheld else "-"
    if diff.partial(diff.old, "month") or diff.partial(diff.new, "month"):
        return UNKNOWN
    change = new - old
    return "$0.0000" if round(change, 4) == 0 else f"{'+' if change > 0 else '-'}${abs(change):,.4f}"


def _gpu_hours(diff: CostDiff, between: str) -> str:
    """$/GPU-hour before, after and the difference, joined by `between` (` | ` for a table row)."""
    return between.join((per_gpu_hour(diff.old.per_gpu_hour, diff.partial(diff.old, "month")),
                         per_gpu_hour(diff.new.per_gpu_hour, diff.partial(diff.new, "month")),
                         _gpu_hour_delta(diff)))


def text(diff: CostDiff) -> list[tuple[str, int]]:
    """The same for a terminal, as (line, indent of its continuation lines): the CLI wraps each at its width."""
    out: list[tuple[str, int]] = [(f"clusterforge cost: {short(diff.old_name)} -> {short(diff.new_name)}", 4),
                                  (headline(diff), 4)]
    for period, label in PERIODS:
        items = diff.items(period)
        if not items:
            continue
        out.append((f"{label} items (before -> after, difference)", 0))
        out += [(f"  {c.name}: {usd(c.before, c.before_state)} -> {usd(c.after, c.after_state)} ({signed(c.delta)})",
                 6) for c in items]
        if period == "month" and (round(diff.amortised(diff.old), 2) or round(diff.amortised(diff.new), 2)):
            before, after = diff.amortised(diff.old), diff.amortised(diff.new)
            out.append((f"  purchase amortised per month: {usd(before)} -> {usd(after)} "
                        f"({signed(after - before)})", 6))
    for (period, _), (label, before, after) in zip(PERIODS, diff.totals(), strict=True):
        if before or after or label == "monthly total":
            old, new, change = diff.total_cells(period, before, after)
            change = f"({change})" if change == UNKNOWN else f"({signed(after - before)}){percent(before, after)}"
            out.append((f"{label}: {old} -> {new} {change}", 4))
    before_after, _, change = _gpu_hours(diff, " -> ").rpartition(" -> ")
    out.append((f"per GPU-hour: {before_after} ({change})", 4))
    out += [(f"per GPU-hour {note}", 4) for note in gpu_hour_notes(diff)]
    for name, where in diff.unpriced():
        out.append((f"not priced ({where}): {name}", 4))
    return [(log_line(line), indent) for line, indent in out]
