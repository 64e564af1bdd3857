"""Turning a quoted price into a cost line, and the line for an item the catalog has no price for."""

from __future__ import annotations

from clusterforge.catalog.price_book import Quoted
from clusterforge.cost.model import CostLine

NO_PRICE = "no price in the catalog: add one under `prices:` in a --catalog file (docs/cost.md)"


def no_price_in(region: str | None, what: str, elsewhere: tuple[Quoted, ...]) -> str:
    """Why an item that the table prices in other regions has no price in `region` (the regions it has, with
    their dates), and how to add one; NO_PRICE where no region prices it or the target has no regions. The text
    before its first colon is the reason on its own (COST-003 quotes it)."""
    if not region or not elsewhere:
        return NO_PRICE
    has = ", ".join(f"{quoted.region} dated {quoted.price.date}" for quoted in elsewhere)
    return (f"no price in the table for {region} ({what} is priced for {has} only, never carried over to another "
            f"region): add one under `prices: regions: {region}:` in a --catalog file (docs/cost.md)")


def in_region(name: str, region: str | None, elsewhere: tuple[Quoted, ...]) -> str:
    """`name` with the region that has no price for it, where that region is the reason."""
    return f"{name} in {region}" if region and elsewhere else name


def count(quantity: float) -> str:
    """32, 46,720, 0.5: a quantity as a person writes it."""
    return f"{quantity:,.2f}".rstrip("0").rstrip(".")


def priced(item: str, category: str, quantity: float, unit: str, period: str, quoted: Quoted | None,
           name: str = "", source: str = NO_PRICE, pool: str = "", region: str | None = None) -> CostLine:
    """quantity × the quoted price. An item without a price stays a line of its own (so the gap shows where it
    is) but carries no figure: it is marked unpriced with `name` (what it is and how many, e.g. "dgx-b200 server
    x 32 (pool su1)"; by default the item and its quantity), and the totals leave it out and name it instead.
    `source` says why there is no price (by default: none in the catalog). `region` is the cloud region the item
    is priced for (None: its target's prices have no region)."""
    if quoted is None:
        missing = name or f"{item} x {count(quantity)} {unit}"
        return CostLine(item, category, quantity, unit, 0.0, 0.0, period, source, "", True, missing, pool,
                        region or "")
    usd = quoted.price.usd
    return CostLine(item, category, quantity, unit, usd, quantity * usd, period, quoted.source, quoted.price.date,
                    quoted.price.estimate, "", pool, region or "")


def unpriced(lines: tuple[CostLine, ...]) -> list[CostLine]:
    """The lines whose item has no price (no figure of theirs is in any total)."""
    return [line for line in lines if not line.priced]
