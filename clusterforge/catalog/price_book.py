"""The prices of every catalog file merged, each entry remembering which file stated it.

A site's file restates a price to replace it (a negotiated rate): the later file wins, entry by entry, and the
entry's origin becomes that file, so a cost line can say whose price it used. A target's own price tables
(catalog/prices.py `prices_model`) are kept by name in `tables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterforge.catalog.prices import Figure, Price, PriceTable, Purchase

_FACILITY = ("rack", "pdu", "rdhx", "cdu")


@dataclass(frozen=True)
class Quoted:
    """A price and the catalog file it came from (None: the built-in catalog)."""

    price: Price
    origin: str | None = None

    @property
    def source(self) -> str:
        """The price's source, led by the override file when a site's catalog stated it."""
        return f"{self.origin}: {self.price.source}" if self.origin else self.price.source


@dataclass(frozen=True)
class QuotedFigure:
    figure: Figure
    origin: str | None = None

    @property
    def source(self) -> str:
        return f"{self.origin}: {self.figure.source}" if self.origin else self.figure.source


@dataclass
class PriceBook:
    """Lookups over the merged price tables."""

    instances: dict[tuple[str, str], Quoted] = field(default_factory=dict)
    hardware: dict[str, Quoted] = field(default_factory=dict)
    links: dict[int, Quoted] = field(default_factory=dict)
    facility: dict[str, Quoted] = field(default_factory=dict)
    energy_usd_per_kwh: Quoted | None = None
    pue: QuotedFigure | None = None
    idle_power_fraction: QuotedFigure | None = None
    tables: dict[str, dict[str, Quoted]] = field(default_factory=dict)  # the targets' own tables, by name

    def add(self, table: PriceTable, origin: str | None) -> None:
        """Merge one file's table over what is there."""
        for key, options in table.instances.items():
            for purchase, price in options.items():
                self.instances[(key, purchase)] = Quoted(price, origin)
        self.hardware.update({key: Quoted(price, origin) for key, price in table.hardware.items()})
        self.links.update({int(speed[:-1]): Quoted(price, origin) for speed, price in table.links.items()})
        for name in _FACILITY:
            price = getattr(table.facility, name)
            if price is not None:
                self.facility[name] = Quoted(price, origin)
        if table.energy_usd_per_kwh is not None:
            self.energy_usd_per_kwh = Quoted(table.energy_usd_per_kwh, origin)
        if table.pue is not None:
            self.pue = QuotedFigure(table.pue, origin)
        if table.idle_power_fraction is not None:
            self.idle_power_fraction = QuotedFigure(table.idle_power_fraction, origin)
        for name in type(table).model_fields.keys() - PriceTable.model_fields.keys():
            own: dict[str, Price] = getattr(table, name)
            self.tables.setdefault(name, {}).update({key: Quoted(price, origin) for key, price in own.items()})

    def copy(self) -> PriceBook:
        return PriceBook(dict(self.instances), dict(self.hardware), dict(self.links), dict(self.facility),
                         self.energy_usd_per_kwh, self.pue, self.idle_power_fraction,
                         {name: dict(rows) for name, rows in self.tables.items()})

    def table(self, name: str) -> dict[str, Quoted]:
        """A target's own price table (empty when no catalog file has it)."""
        return self.tables.get(name, {})

    def instance_hour(self, key: str, purchase: Purchase) -> Quoted | None:
        """The hourly price of `key` bought as `purchase`; a reservation without a rate of its own bills on demand."""
        found = self.instances.get((key, purchase))
        if found is None and purchase == "reservation":
            return self.instances.get((key, "on-demand"))
        return found
