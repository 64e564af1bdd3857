"""The estimate for people: a text listing for the terminal and a Markdown table for a pull-request comment.

Widths come from the data and the terminal, never constants: a column is as wide as its widest cell, and the
source under each line wraps at the width the caller gives (the terminal's)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from clusterforge.cost.model import HOURS_PER_MONTH, CostEstimate, CostLine
from clusterforge.formats.escape import log_line, markdown_code, markdown_safe, plural

PERIOD = {"month": "/month", "once": " once"}
SAVED = "saved by powering idle nodes down, not subtracted (a budget holds every node powered up all month)"
NOT_PRICED = "not in the totals"


def usd(value: float) -> str:
    """$1,234.56; sub-dollar unit prices keep four decimals ($0.8064)."""
    return f"${value:,.4f}" if 0 < abs(value) < 1 else f"${value:,.2f}"


def quantity(line: CostLine) -> str:
    return f"{line.quantity:,.2f}".rstrip("0").rstrip(".") + f" {line.unit}"


def unit_price(line: CostLine) -> str:
    return usd(line.unit_usd) if line.priced else "no price"


def line_total(line: CostLine) -> str:
    """What the line adds to its period's total; an unpriced line adds nothing and says so (never "$0.00")."""
    return usd(line.total_usd) + PERIOD.get(line.period, "") if line.priced else NOT_PRICED


def _dated(line: CostLine) -> str:
    """The line's provenance beneath it: the region it is priced for (a cloud's prices differ by region), whether
    the figure is an estimate, its source and date."""
    region = f"{line.region} prices; " if line.region else ""
    mark = "estimate; " if line.estimate and line.priced else ""
    date = f" ({line.date})" if line.date else ""
    return f"{region}{mark}{line.source}{date}"


def summary(estimate: CostEstimate, amortise_years: float, markdown: bool = False) -> list[tuple[str, str]]:
    """The totals as (label, value) rows, with the arithmetic that makes them. With unpriced items every total
    says it leaves them out (it is a floor, not the cost), and a row names each of them. The cost per GPU-hour is
    the priced cost over the priced GPUs, with what it leaves out, or withheld with the reason (cost/ratios.py).
    With `markdown`, what comes from the input is written literal: the unpriced items' names as code spans, the
    pools named in the cost per GPU-hour escaped (escape.markdown_safe); the figures stay as they are."""
    name: Callable[[str], str] = markdown_code if markdown else str
    missing = len(estimate.unpriced)
    floor = f", excluding {plural(missing, 'unpriced item')}" if missing else ""
    rows = [("monthly", f"{usd(estimate.monthly_usd)}/month{floor}")]
    if estimate.capex_usd:
        rows[0] = ("monthly", f"{usd(estimate.monthly_usd)}/month (recurring lines + capex "
                              f"{usd(estimate.capex_usd)} / (12 x {amortise_years:g} years)){floor}")
        rows.append(("capex", usd(estimate.capex_usd) + floor))
    ratio = per_gpu_hour(estimate, markdown_safe if markdown else str)
    if ratio:
        rows.append(("per GPU-hour", ratio))
    if missing:
        rows.append(("unpriced", f"{plural(missing, 'item')} with no price, not in any total above: "
                                 f"{'; '.join(name(item) for item in estimate.unpriced)} (add prices with --catalog)"))
    if estimate.savings:
        share = f" at idle share {estimate.idle_share * 100:g} %" if estimate.idle_share is not None else ""
        rows.append(("saved", f"{usd(estimate.saved_monthly_usd)}/month{share}, not in monthly (the budget's "
                              "worst case is every node powered up)"))
    estimates = sum(1 for line in estimate.lines if line.estimate and line.priced)
    if estimates:
        with_price = sum(1 for line in estimate.lines if line.priced)
        rows.append(("estimates", f"{estimates} of {with_price} priced lines use a figure with no published "
                                  "list price (override with --catalog)"))
    return rows


def per_gpu_hour(estimate: CostEstimate, words: Callable[[str], str] = str) -> str:
    """`$4.9461 over 512 GPUs: $1,848,670.27 / (512 GPUs x 730 h)`; with a pool left out, `$1.3282 over the 128
    priced GPUs (128 GPUs of pool burst unpriced): ...` and the other unpriced items the figure excludes; `withheld:
    ...` where no GPU is priced; empty where the cluster has no GPU. `words` writes the words that name pools."""
    ratio = estimate.per_gpu_hour
    if ratio.usd is None:
        return words(ratio.withheld)
    floor = f", {ratio.excluding()}" if ratio.excluded else ""
    return (f"${ratio.usd:,.4f} {words(ratio.over())}: {usd(estimate.monthly_usd)} / ({ratio.gpus:,} GPUs x "
            f"{HOURS_PER_MONTH} h){floor}")


def text(title: str, estimate: CostEstimate, amortise_years: float, width: int) -> str:
    """One line per item: quantity × unit price = total, its source and date wrapped beneath; then what powering
    idle nodes down saves, under a heading of its own; then the totals."""
    every = (*estimate.lines, *estimate.savings)
    item_w = max((len(line.item) for line in every), default=0)
    qty_w = max((len(quantity(line)) for line in every), default=0)
    unit_w = max((len(unit_price(line)) for line in every), default=0)
    out = [log_line(f"{title}: cost estimate in {estimate.currency}")]
    wrap = max(width - 6, 20)
    total_w = max((len(line_total(line)) for line in every), default=0)
    one_row = 2 + item_w + 2 + qty_w + 3 + unit_w + 3 + total_w <= width  # else the figures go under the item

    def rows(lines: tuple[CostLine, ...]) -> list[str]:
        shown = []
        for line in lines:
            figures = f"{quantity(line):>{qty_w}} x {unit_price(line):>{unit_w}} = {line_total(line)}"
            if one_row:
                shown.append(log_line(f"  {line.item:<{item_w}}  {figures}"))
            else:
                shown += [log_line(f"  {line.item}"), log_line(f"      {figures.strip()}")]
            shown += [log_line("      " + part) for part in textwrap.wrap(_dated(line), wrap)]
        return shown

    out += rows(estimate.lines)
    if estimate.savings:
        out += [log_line(part) for part in textwrap.wrap(f"{SAVED}:", width)] + rows(estimate.savings)
    label_w = max(len(label) for label, _ in summary(estimate, amortise_years))
    out += [log_line(f"{label:<{label_w}}  {value}") for label, value in summary(estimate, amortise_years)]
    return "\n".join(out) + "\n"


def markdown(title: str, estimate: CostEstimate, amortise_years: float) -> str:
    """A table for a pull-request comment that also reads as plain text: what comes from the input (item names,
    sources, regions, the blueprint's name) written as literal text (escape.markdown_safe: a backslash before
    what Markdown would read, no HTML entities) or, for the unpriced items' names, as code spans; the figures and
    words of our own as they are. What powering idle nodes down saves is in a table of its own, apart from the
    lines the totals add up."""
    out = [f"### Cost: {markdown_safe(title)}", "", *_table(estimate.lines)]
    if estimate.savings:
        out += ["", f"{SAVED[0].upper() + SAVED[1:]}:", "", *_table(estimate.savings)]
    out.append("")
    totals = summary(estimate, amortise_years, markdown=True)
    out += [f"- **{label}**: {value}" for label, value in totals]
    return "\n".join(out) + "\n"


def _table(lines: tuple[CostLine, ...]) -> list[str]:
    out = ["| Item | Quantity | Unit price | Total | Region | Source | Date |", "|---|--:|--:|--:|---|---|---|"]
    for line in lines:
        source = ("estimate: " if line.estimate and line.priced else "") + line.source
        cells = (markdown_safe(line.item), quantity(line), unit_price(line), line_total(line),
                 markdown_safe(line.region or "-"), markdown_safe(source), markdown_safe(line.date or "-"))
        out.append("| " + " | ".join(cells) + " |")
    return out
