"""Turning a quoted price into a cost line, and the line for an item the catalog has no price for."""

from __future__ import annotations

from clusterforge.catalog.price_book import Quoted
from clusterforge.cost.model import CostLine

NO_PRICE = "no price in the catalog: add one under `prices:` in a --catalog file (docs/cost.md)"


def count(quantity: float) -> str:
    """32, 46,720, 0.5: a quantity as a person writes it."""
    return f"{quantity:,.2f}".rstrip("0").rstrip(".")


def priced(item: str, category: str, quantity: float, unit: str, period: str, quoted: Quoted | None,
           name: str = "", source: str = NO_PRICE, pool: str = "") -> CostLine:
    """quantity × the quoted price. An item without a price stays a line of its own (so the gap shows where it
    is) but carries no figure: it is marked unpriced with `name` (what it is and how many, e.g. "dgx-b200 server
    x 32 (pool su1)"; by default the item and its quantity), and the totals leave it out and name it instead.
    `source` says why there is no price (by default: none in the catalog)."""
    if quoted is None:
        missing = name or f"{item} x {count(quantity)} {unit}"
        return CostLine(item, category, quantity, unit, 0.0, 0.0, period, source, "", True, missing, pool)
    usd = quoted.price.usd
    return CostLine(item, category, quantity, unit, usd, quantity * usd, period, quoted.source, quoted.price.date,
                    quoted.price.estimate, "", pool)


def unpriced(lines: tuple[CostLine, ...]) -> list[CostLine]:
    """The lines whose item has no price (no figure of theirs is in any total)."""
    return [line for line in lines if not line.priced]
