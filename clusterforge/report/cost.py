"""The report's cost panel: the estimate `clusterforge cost` makes (clusterforge.cost, the same lines, prices and
sources), as totals, a breakdown by category and the lines. The estimate has one line per pool or item, never per
node, so the panel stays small at any scale.

An unpriced line (a server model with no price) says so as `clusterforge cost` does: "no price" and "not in the
totals", never $0.00; it is left out of the breakdown, every total says how many unpriced items it excludes, and
the panel names them."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.cost import HOURS_PER_MONTH, CostEstimate, estimate_cost
from clusterforge.formats.cost import line_total, quantity, unit_price, usd
from clusterforge.pipeline.analysis import Analysis
from clusterforge.report.words import counted

PERIOD_TITLE = {"month": "per month", "once": "once (capex)"}


@dataclass(frozen=True)
class Share:
    """One category's part of one period's total, drawn as a bar."""

    category: str
    usd: str
    percent: float  # of the period's total, 0-100


@dataclass(frozen=True)
class Row:
    item: str
    category: str
    quantity: str
    unit_price: str
    total: str
    source: str
    estimate: bool  # a priced line whose figure has no published list price
    priced: bool


@dataclass(frozen=True)
class CostPanel:
    currency: str
    cards: tuple[tuple[str, str, str], ...]  # (label, value, note)
    breakdown: tuple[tuple[str, tuple[Share, ...]], ...]  # (period title, its categories, largest first)
    rows: tuple[Row, ...]
    estimates: int  # priced lines with no published list price behind them
    priced: int  # lines with a price (the totals add these up)
    unpriced: tuple[str, ...]  # what has no price, named with its count: in no total above


def cost_panel(analysis: Analysis) -> CostPanel:
    """The panel of the analysed cluster, priced with the catalog the analysis read (a site's --catalog too)."""
    return panel(estimate_cost(analysis.cluster, analysis.plan, analysis.policy.catalog),
                 analysis.cluster.cost.amortise_years)


def panel(estimate: CostEstimate, amortise_years: float) -> CostPanel:
    missing = len(estimate.unpriced)
    floor = f"excluding {counted(missing, 'unpriced item')}" if missing else ""

    def note(*parts: str) -> str:
        return "; ".join(part for part in (*parts, floor) if part)

    cards = [("monthly", f"{usd(estimate.monthly_usd)}",
              note(f"with capex / (12 x {amortise_years:g} years)" if estimate.capex_usd else ""))]
    cards.append(("capex", usd(estimate.capex_usd), note("bought once")))
    ratio = estimate.per_gpu_hour
    if ratio.usd is not None:  # the priced cost over the priced GPUs (cost/ratios.py), as `clusterforge cost` says
        basis = f"{ratio.over()}: " if ratio.left_out else ""
        cards.append(("per GPU-hour", f"${ratio.usd:,.2f}", "; ".join(
            part for part in (f"{basis}{counted(ratio.gpus, 'GPU')} x {HOURS_PER_MONTH} h", ratio.excluding())
            if part)))
    elif ratio.withheld:
        cards.append(("per GPU-hour", "withheld", ratio.withheld.removeprefix("withheld: ")))
    breakdown = []
    of = f" (of the priced total, excluding {counted(missing, 'unpriced item')})" if missing else ""
    for period, title in PERIOD_TITLE.items():
        sums: dict[str, float] = {}
        for line in estimate.lines:
            if line.period == period and line.priced:
                sums[line.category] = sums.get(line.category, 0.0) + line.total_usd
        whole = sum(sums.values())
        if whole > 0:
            breakdown.append((title + of, tuple(Share(category, usd(value), value / whole * 100) for category, value in
                                           sorted(sums.items(), key=lambda kv: -kv[1]))))
    rows = tuple(Row(line.item, line.category, quantity(line), unit_price(line), line_total(line),
                     f"{line.source} ({line.date})" if line.date else line.source, line.estimate and line.priced,
                     line.priced)
                 for line in estimate.lines)
    return CostPanel(estimate.currency, tuple(cards), tuple(breakdown), rows,
                     sum(1 for row in rows if row.estimate), sum(1 for row in rows if row.priced),
                     estimate.unpriced)
