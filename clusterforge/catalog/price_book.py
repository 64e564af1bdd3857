"""The prices of every catalog file merged, each entry remembering which file stated it.

A site's file restates a price to replace it (a negotiated rate): the later file wins, entry by entry, and the
entry's origin becomes that file, so a cost line can say whose price it used. A target's own price tables
(catalog/prices.py `prices_model`) are kept by name in `tables`.

Instance and target prices are kept by region (`EVERY_REGION` for those stated at the top level, which hold in
any region). A lookup names its region and gets that region's price, else one for every region, else none: never
another region's. "Later wins" holds across the two: a later file's price for every region replaces what earlier
files stated for single regions, and a later file's regional price wins in its region.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterforge.catalog.prices import Figure, InstancePrices, Price, PriceTable, Purchase

_FACILITY = ("rack", "pdu", "rdhx", "cdu")
EVERY_REGION = ""  # the region of a price stated at the top level: it holds in any region


@dataclass(frozen=True)
class Quoted:
    """A price and the catalog file it came from (None: the built-in catalog)."""

    price: Price
    origin: str | None = None
    region: str = EVERY_REGION  # the region the price holds in

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

    instances: dict[tuple[str, str, str], Quoted] = field(default_factory=dict)  # (key, purchase, region)
    hardware: dict[str, Quoted] = field(default_factory=dict)
    links: dict[int, Quoted] = field(default_factory=dict)
    facility: dict[str, Quoted] = field(default_factory=dict)
    energy_usd_per_kwh: Quoted | None = None
    pue: QuotedFigure | None = None
    idle_power_fraction: QuotedFigure | None = None
    # the targets' own tables, by name, each keyed (key, region)
    tables: dict[str, dict[tuple[str, str], Quoted]] = field(default_factory=dict)

    def add(self, table: PriceTable, origin: str | None) -> None:
        """Merge one file's table over what is there."""
        self._add_instances(table.instances, origin, EVERY_REGION)
        for region, regional in table.regions.items():
            self._add_instances(regional.instances, origin, region)
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
            rows = self.tables.setdefault(name, {})
            _add_rows(rows, getattr(table, name), origin, EVERY_REGION)
            for region, regional in table.regions.items():
                _add_rows(rows, getattr(regional, name), origin, region)

    def _add_instances(self, prices: InstancePrices, origin: str | None, region: str) -> None:
        for key, options in prices.items():
            for purchase, price in options.items():
                if region == EVERY_REGION:  # replaces every region's earlier price of it
                    for stale in [k for k in self.instances if k[:2] == (key, purchase)]:
                        del self.instances[stale]
                self.instances[(key, purchase, region)] = Quoted(price, origin, region)

    def copy(self) -> PriceBook:
        return PriceBook(dict(self.instances), dict(self.hardware), dict(self.links), dict(self.facility),
                         self.energy_usd_per_kwh, self.pue, self.idle_power_fraction,
                         {name: dict(rows) for name, rows in self.tables.items()})

    def table(self, name: str, region: str | None) -> dict[str, Quoted]:
        """A target's own price table as it holds in `region` (None: a target without regions, which gets only
        the prices for every region); empty when no catalog file has it."""
        rows = self.tables.get(name, {})
        every = {key: quoted for (key, where), quoted in rows.items() if where == EVERY_REGION}
        return every | {key: quoted for (key, where), quoted in rows.items() if region and where == region}

    def table_regions(self, name: str, key: str) -> tuple[Quoted, ...]:
        """Every regional price of `key` in a target's table: where the table does price it."""
        return tuple(quoted for (row, where), quoted in sorted(self.tables.get(name, {}).items())
                     if row == key and where != EVERY_REGION)

    def instance_hour(self, key: str, purchase: Purchase, region: str | None) -> Quoted | None:
        """The hourly price of `key` bought as `purchase` in `region` (None: a target without regions): that
        region's, else one for every region, else none, never another region's. A reservation without a rate of
        its own bills on demand."""
        found = self._instance(key, purchase, region)
        if found is None and purchase == "reservation":
            return self._instance(key, "on-demand", region)
        return found

    def instance_regions(self, key: str, purchase: Purchase) -> tuple[Quoted, ...]:
        """Every regional price of `key` as `purchase` (a reservation's on-demand ones where it has none): the
        regions the table does price it in, for the line that says it has none in the blueprint's."""
        found = tuple(quoted for (row, bought, where), quoted in sorted(self.instances.items())
                      if (row, bought) == (key, purchase) and where != EVERY_REGION)
        return found if found or purchase != "reservation" else self.instance_regions(key, "on-demand")

    def _instance(self, key: str, purchase: str, region: str | None) -> Quoted | None:
        regional = self.instances.get((key, purchase, region)) if region else None
        return regional or self.instances.get((key, purchase, EVERY_REGION))


def _add_rows(rows: dict[tuple[str, str], Quoted], prices: dict[str, Price], origin: str | None, region: str) -> None:
    """One target table's rows of one file, for one region (EVERY_REGION: replacing each region's earlier row)."""
    for key, price in prices.items():
        if region == EVERY_REGION:
            for stale in [k for k in rows if k[0] == key]:
                del rows[stale]
        rows[(key, region)] = Quoted(price, origin, region)
