"""Shapes of the price tables: every price with its source, the date it was read, and whether it is an estimate.

Prices are catalog data like hardware figures. Unlike hardware, a site's catalog file may restate a built-in
price: a negotiated price replaces the list price, and the cost lines then name that file as their source.

A target prices what only it sells (a managed file system) in tables of its own (`CatalogPart.prices`: fields of
`dict[str, Price]` beside these), which `prices_model` composes in.

A cloud sells the same instance type at a different price in each region, so its list prices sit under
`regions:`, by region (`regions: {us-east-1: {instances: ..., fsx_lustre: ...}}`), and a blueprint is priced only
from the table of the region it deploys to (its `cost.py`'s `price_region`): a region the table lacks leaves the item
unpriced, never priced at another region's figure. The same tables at the top level hold for every region: a
site's own rate (a negotiated discount), or a target's whose prices do not differ by region.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Annotated, Any, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, create_model

from clusterforge.core.purchase import PURCHASES, Purchase
from clusterforge.core.text import CatalogKey, OneLine
from clusterforge.core.validation import expected, figure

__all__ = ["PURCHASES", "FacilityPrices", "Figure", "Price", "PriceTable", "Purchase", "RegionalPrices",
           "prices_model"]

ISO_DATE = r"^\d{4}(-\d{2}(-\d{2})?)?$"


def _iso(value: Any) -> Any:
    """YAML reads 2026-09-25 as a date, and 2025 or 20260925 (ISO 8601's basic form, which the built-in files use
    so that the fast YAML path reads them like PyYAML) as numbers: each becomes the extended ISO text."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
        if len(text) == 8:
            try:
                return datetime.date(int(text[:4]), int(text[4:6]), int(text[6:])).isoformat()
            except ValueError:
                return text  # refused by the pattern, with the value shown
        return text
    return value


IsoDate = Annotated[str, BeforeValidator(_iso), StringConstraints(pattern=ISO_DATE), Field(description=expected(
    ISO_DATE, "an ISO date (2026-09-25), or a month (2026-09) or year (2025) where the source gives no day"))]
LINK_SPEED = r"^[1-9][0-9]{0,5}G$"
SOURCE_LINE = OneLine(1, 2000)
SOURCE = SOURCE_LINE.pattern
PriceSource = Annotated[str, SOURCE_LINE, Field(description=expected(
    SOURCE, "where the figure comes from: a URL or document, one line of at most 2,000 characters"))]
REGION = r"^[a-z]{2}(-[a-z]+)+-[0-9]$"
RegionName = Annotated[str, StringConstraints(pattern=REGION), Field(description=expected(
    REGION, "a cloud region, e.g. us-east-1"))]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Price(_Strict):
    """One price in US dollars per unit of its table, with its provenance."""

    usd: Annotated[float, figure("USD", 1e9, inclusive=True)]
    source: PriceSource
    date: IsoDate
    estimate: bool = False  # True where no list price is published: the figure is reasoned, not quoted
    notes: PriceSource | None = None


InstancePrices = dict[CatalogKey, dict[Purchase, Price]]  # USD per instance-hour, by type and purchase option


class Figure(_Strict):
    """A dimensionless planning default (PUE), with its provenance."""

    value: Annotated[float, figure("", 10, inclusive=True)]
    source: PriceSource
    date: IsoDate
    estimate: bool = False


class Share(Figure):
    """A planning default that is a share of a whole (0 to 1), with its provenance."""

    value: Annotated[float, figure("", 1, inclusive=True)]


class FacilityPrices(_Strict):
    """One-off purchase prices of what a rack needs beyond its servers and switches."""

    rack: Price | None = None  # per rack cabinet that holds part of the cluster
    pdu: Price | None = None  # per power feed of those racks (one rack PDU on each feed)
    rdhx: Price | None = None  # per rack cooled by a rear-door heat exchanger (cooling kind `rdhx`)
    cdu: Price | None = None  # per liquid-cooled rack (cooling kind `liquid`): its share of a coolant unit


class RegionalPrices(_Strict):
    """The list prices of one cloud region: its instance types per instance-hour, by purchase option (and the
    target's own tables beside them, composed in by `prices_model`)."""

    instances: InstancePrices = {}


class PriceTable(_Strict):
    """The prices of one catalog file. A later file's entry replaces an earlier one's."""

    instances: InstancePrices = {}  # USD per instance-hour, by purchase option, in every region (a site's rate)
    regions: dict[RegionName, RegionalPrices] = {}
    """Prices that hold in one cloud region only, by region: a blueprint deployed there is priced from them."""
    hardware: dict[CatalogKey, Price] = {}  # USD per unit bought: servers and switches, keyed like `hardware:`
    links: dict[Annotated[str, StringConstraints(pattern=LINK_SPEED), Field(description=expected(
        LINK_SPEED, "a link speed in Gb/s followed by G, e.g. 400G"))], Price] = {}
    """USD per fabric cable with its two transceivers, by link speed (`400G`)."""
    facility: FacilityPrices = FacilityPrices()
    energy_usd_per_kwh: Price | None = None  # the default where a site gives no `energy_usd_per_kwh`
    pue: Figure | None = None  # the default where a site gives no `pue`
    # The share of its max_power_kw a powered-up idle server draws, where its catalog entry has no idle_power_kw:
    # what the cost counts as saved per node-hour a power-saved on-prem pool's node is powered down.
    idle_power_fraction: Share | None = None


def prices_model(tables: Sequence[type[BaseModel]]) -> type[PriceTable]:
    """The price tables with the targets' own: each field of each model a table of `dict[str, Price]`, at the top
    level (every region) and under each of `regions:`; a name taken twice is a bug of the target that adds it."""
    fields: dict[str, Any] = {}
    for model in tables:
        for name, info in model.model_fields.items():
            if name in PriceTable.model_fields or name in fields or get_origin(info.annotation) is not dict:
                raise RuntimeError(f"price table {name!r} is defined twice or is not a mapping to prices")
            fields[name] = (info.annotation, info)
    if not fields:
        return PriceTable
    regional: type[RegionalPrices] = create_model("RegionalPrices", __base__=RegionalPrices,
                                                  __doc__=RegionalPrices.__doc__, **fields)
    made: type[PriceTable] = create_model(
        "PriceTable", __base__=PriceTable, __doc__=PriceTable.__doc__,
        regions=(dict[RegionName, regional], Field({}, description=PriceTable.model_fields["regions"].description)),
        **fields)
    return made
