"""What a change does to the cost, item by item: the view a pull-request comment shows (`cost --diff`,
`diff -f markdown`), as text, JSON and Markdown.

Reviewers know the shape from Infracost's PR comment: each priced item's cost before, after and the difference,
then the totals. Here the items are `clusterforge cost`'s lines (one per pool, file system, kind of switch:
O(pools), never one per node), matched by item and period: monthly lines apart from one-off purchases, since
adding a month to a purchase means nothing. The monthly total is the estimate's own (recurring lines plus the
purchase amortised), so the row that makes up the gap is shown instead of leaving the column not adding up.
What the catalog has no price for (`CostEstimate.unpriced`) is named on its own line: a total that leaves an
item out must say so, not count it as $0.

The Markdown starts with MARKER, an HTML comment GitHub does not show: the shipped workflow finds its own
comment by it and edits that one on each push instead of adding another. Every string from the input (item
names, the blueprints' paths or REV:PATH, which a pull request names) is written as literal text
(escape.markdown_safe) or a code span (escape.markdown_code).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.cost.model import CostEstimate
from clusterforge.formats.escape import log_line, markdown_code, markdown_safe

MARKER = "<!-- clusterforge-cost-diff -->"
PERIODS = (("month", "monthly"), ("once", "one-off"))


@dataclass(frozen=True)
class ItemChange:
    """One item's cost for its period in OLD and NEW (None: the side has no such item)."""

    item: str
    period: str  # "month" | "once"
    before: float | None
    after: float | None

    @property
    def delta(self) -> float:
        return (self.after or 0.0) - (self.before or 0.0)


@dataclass(frozen=True)
class CostDiff:
    """Two estimates (OLD, NEW) of one cluster and what they name OLD and NEW by (a path, or REV:PATH)."""

    old_name: str
    new_name: str
    old: CostEstimate
    new: CostEstimate

    def items(self, period: str) -> list[ItemChange]:
        """The priced lines of `period` matched by item: OLD's order, then the items only NEW has. An item
        named twice on one side (it should not be) is summed, so no dollar goes missing."""
        before: dict[str, float] = {}
        after: dict[str, float] = {}
        for side, estimate in ((before, self.old), (after, self.new)):
            for line in estimate.lines:
                if line.period == period:
                    side[line.item] = side.get(line.item, 0.0) + line.total_usd
        names = list(dict.fromkeys([*before, *after]))
        return [ItemChange(name, period, before.get(name), after.get(name)) for name in names]

    def amortised(self, estimate: CostEstimate) -> float:
        """What the monthly total holds beyond its monthly lines: the purchase amortised per month."""
        return estimate.monthly_usd - sum(line.total_usd for line in estimate.lines if line.period == "month")

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
        return {
            "old": self.old_name, "new": self.new_name, "currency": self.new.currency,
            "items": [{"item": c.item, "period": c.period, "before_usd": c.before, "after_usd": c.after,
                       "delta_usd": c.delta} for period, _ in PERIODS for c in self.items(period)],
            "monthly": _triple(self.old.monthly_usd, self.new.monthly_usd),
            "once": _triple(self.old.capex_usd, self.new.capex_usd),
            "usd_per_gpu_hour": {"before": self.old.usd_per_gpu_hour, "after": self.new.usd_per_gpu_hour},
            "unpriced": [{"item": name, "where": where} for name, where in self.unpriced()],
        }


def _triple(before: float, after: float) -> dict[str, float]:
    return {"before_usd": before, "after_usd": after, "delta_usd": after - before}


def usd(value: float | None) -> str:
    """$1,234.56; `-` for an item a side does not have."""
    if value is None:
        return "-"
    return f"{'-' if round(value, 2) < 0 else ''}${abs(value):,.2f}"


def signed(value: float) -> str:
    """+$1,234.56 / -$1,234.56 / $0.00: the difference, its sign always written."""
    if round(value, 2) == 0:
        return "$0.00"
    return f"{'+' if value > 0 else '-'}${abs(value):,.2f}"


def percent(before: float, after: float) -> str:
    """` (+50%)`, empty where there is nothing to divide by."""
    if not before:
        return ""
    share = (after - before) / before * 100
    return f" ({'+' if share >= 0 else '-'}{abs(share):.0f}%)"


def per_gpu_hour(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def headline(diff: CostDiff, arrow: str = "->") -> str:
    """`monthly $A -> $B (+$C, +P%)`: the one figure a reviewer reads first (figures only: no input in it)."""
    old, new = diff.old.monthly_usd, diff.new.monthly_usd
    share = percent(old, new).strip(" ()")
    return f"monthly {usd(old)} {arrow} {usd(new)} ({signed(new - old)}{', ' + share if share else ''})"


def markdown(diff: CostDiff) -> str:
    """The pull-request comment: MARKER, a heading naming both sides, the monthly and one-off items as tables
    (before, after, difference), the totals, $/GPU-hour before and after, and what is not priced."""
    out = [MARKER, f"### clusterforge cost: {markdown_code(diff.old_name)} → {markdown_code(diff.new_name)}", "",
           f"**{headline(diff, '→')}**, per GPU-hour {per_gpu_hour(diff.old.usd_per_gpu_hour)} → "
           f"{per_gpu_hour(diff.new.usd_per_gpu_hour)} ({markdown_safe(diff.new.currency)}; an estimate from "
           "list prices, not an invoice)", ""]
    totals = dict((label, (before, after)) for label, before, after in diff.totals())
    for period, label in PERIODS:
        items = diff.items(period)
        before, after = totals[f"{label} total"]
        if not items and not before and not after:
            continue
        out += [f"| {label} item | before | after | difference |", "|---|--:|--:|--:|"]
        out += [f"| {markdown_safe(c.item)} | {usd(c.before)} | {usd(c.after)} | {signed(c.delta)} |" for c in items]
        if period == "month":
            amortised_before, amortised_after = diff.amortised(diff.old), diff.amortised(diff.new)
            if round(amortised_before, 2) or round(amortised_after, 2):
                out.append(f"| purchase amortised per month | {usd(amortised_before)} | {usd(amortised_after)} | "
                           f"{signed(amortised_after - amortised_before)} |")
        out += [f"| **{label} total** | **{usd(before)}** | **{usd(after)}** | "
                f"**{signed(after - before)}**{percent(before, after)} |", ""]
    out += [f"| per GPU-hour | {per_gpu_hour(diff.old.usd_per_gpu_hour)} | "
            f"{per_gpu_hour(diff.new.usd_per_gpu_hour)} | "
            f"{_gpu_hour_delta(diff)} |", ""] if diff.old.usd_per_gpu_hour or diff.new.usd_per_gpu_hour else []
    unpriced = diff.unpriced()
    if unpriced:
        named = ", ".join(f"{markdown_code(name)} ({where})" for name, where in unpriced)
        out += [f"**Not priced** (no price in the catalog; in no total above): {named}", ""]
    out.append("Each line's price, source and date: `clusterforge cost FILE`.")
    return "\n".join(out) + "\n"


def _gpu_hour_delta(diff: CostDiff) -> str:
    old, new = diff.old.usd_per_gpu_hour, diff.new.usd_per_gpu_hour
    if old is None or new is None:
        return "-"
    change = new - old
    return "$0.0000" if round(change, 4) == 0 else f"{'+' if change > 0 else '-'}${abs(change):,.4f}"


def text(diff: CostDiff) -> list[tuple[str, int]]:
    """The same for a terminal, as (line, indent of its continuation lines): the CLI wraps each at its width."""
    out: list[tuple[str, int]] = [(f"clusterforge cost: {diff.old_name} -> {diff.new_name}", 4),
                                  (headline(diff), 4)]
    for period, label in PERIODS:
        items = diff.items(period)
        if not items:
            continue
        out.append((f"{label} items (before -> after, difference)", 0))
        out += [(f"  {c.item}: {usd(c.before)} -> {usd(c.after)} ({signed(c.delta)})", 6) for c in items]
        if period == "month" and (round(diff.amortised(diff.old), 2) or round(diff.amortised(diff.new), 2)):
            before, after = diff.amortised(diff.old), diff.amortised(diff.new)
            out.append((f"  purchase amortised per month: {usd(before)} -> {usd(after)} "
                        f"({signed(after - before)})", 6))
    out += [(f"{label}: {usd(before)} -> {usd(after)} ({signed(after - before)}){percent(before, after)}", 4)
            for label, before, after in diff.totals() if before or after or label == "monthly total"]
    out.append((f"per GPU-hour: {per_gpu_hour(diff.old.usd_per_gpu_hour)} -> "
                f"{per_gpu_hour(diff.new.usd_per_gpu_hour)} ({_gpu_hour_delta(diff)})", 4))
    for name, where in diff.unpriced():
        out.append((f"not priced ({where}): {name}", 4))
    return [(log_line(line), indent) for line, indent in out]
