"""Turning a quoted price into a cost line, and the line for an item the catalog has no price for."""

from __future__ import annotations

from clusterforge.catalog.price_book import Quoted
from clusterforge.cost.model import CostLine

NO_PRICE = "no price in the catalog: add one under `prices:` in a --catalog file (docs/cost.md)"


def priced(item: str, category: str, quantity: float, unit: str, period: str, quoted: Quoted | None) -> CostLine:
    """quantity × the quoted price; an item without a price is a line of its own at $0, marked an estimate, so
    the gap shows instead of vanishing from the total."""
    if quoted is None:
        return CostLine(item, category, quantity, unit, 0.0, 0.0, period, NO_PRICE, "", True)
    usd = quoted.price.usd
    return CostLine(item, category, quantity, unit, usd, quantity * usd, period, quoted.source, quoted.price.date,
                    quoted.price.estimate)


def unpriced(lines: tuple[CostLine, ...]) -> list[CostLine]:
    """The lines whose item has no price (their $0 understates the total)."""
    return [line for line in lines if line.source == NO_PRICE]
