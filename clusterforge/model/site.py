"""The facility: rows, racks, feeds, panels and cooling of an on-prem site."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from clusterforge.core.validation import figure
from clusterforge.model.base import Celsius, Count, Kg, Kw, Name, ObjectName, Strict
from clusterforge.model.networks import SiteNetworks

InletClass = Literal["A1", "A2", "A3", "A4"]
WaterClass = Literal["W17", "W27", "W32", "W40", "W45", "W+"]
Airflow = Literal["front-to-rear", "rear-to-front"]


class Feed(Strict):
    """One power feed (whip, cord) into a rack; `side` is its A/B redundancy path."""

    name: ObjectName
    side: Literal["A", "B"]
    voltage: Annotated[float, figure("V", 1000)]
    amps: Annotated[float, figure("A", 1000)]
    phase: Literal[1, 3] = 1
    panel: ObjectName | None = Field(None, description=(
        "the site panel (site.panels) or power source (site.power_sources) this cord lands on; the power rules "
        "judge the loss of each of them (docs/power-topologies.md)"))


# upstream elements a panel or power source draws from: a handful in any real one-line diagram
Upstream = Annotated[list[ObjectName], Field(max_length=16)]
FED_BY = ("the power sources or panels this one draws from; its load splits evenly over those that are live, and "
          "it is lost only when all of them (and its catcher) are. Without it the site says nothing above this "
          "element: the A/B side of the cords on it stands for their path (docs/power-topologies.md)")
CATCHER = ("the reserve source that picks up this element's whole load when every source in fed_by is lost "
           "(block-redundant, catcher topology); it carries nothing otherwise")


class Panel(Strict):
    """A panel or busway section that several feeds draw from."""

    name: ObjectName
    voltage: Annotated[float, figure("V", 100_000)]
    amps: Annotated[float, figure("A", 100_000)]
    phase: Literal[1, 3] = 3
    fed_by: Upstream = Field([], description=FED_BY)
    catcher: ObjectName | None = Field(None, description=CATCHER)


class PowerSource(Strict):
    """A UPS, switchboard, generator or utility feed upstream of the panels: an element whose loss the power rules
    judge, and whose rated output they hold each surviving one to."""

    name: ObjectName
    kind: Literal["ups", "switchboard", "generator", "utility"] = Field(
        "ups", description="what it is, for messages; every kind is judged the same way")
    kw: Kw | None = Field(None, description=(
        "rated output in kW (a UPS's kW rating at its output power factor); omitted: its loss is still judged, "
        "its load is not"))
    fed_by: Upstream = Field([], description=FED_BY)
    catcher: ObjectName | None = Field(None, description=CATCHER)


class Placement(Strict):
    """Devices of a pool placed in a rack; `position` is the lowest U of the first one (1-based)."""

    pool: Name
    count: Count = 1
    position: Annotated[int, Field(ge=1, le=100)] | None = None


class _CoolingBase(Strict):
    delivered_cfm: Annotated[float, Field(gt=0)] | None = None


class AirCooling(_CoolingBase):
    """Room air; capacity defaults to the policy's air ceiling when `air_kw` is not given."""

    kind: Literal["air"]
    air_kw: Kw | None = None


class ContainmentCooling(_CoolingBase):
    """Hot or cold aisle containment; default capacity from the policy's containment ceiling."""

    kind: Literal["containment"]
    air_kw: Kw | None = None


class RdhxCooling(_CoolingBase):
    """Rear-door heat exchanger: the door's rated kW is required."""

    kind: Literal["rdhx"]
    air_kw: Kw


class LiquidCooling(_CoolingBase):
    """Direct liquid cooling, with the rack's remaining air capacity. The liquid goes to the rack's loop
    (`liquid_kw`, fed by its row's CDUs) or to CDUs of its own (`cdu_kw`, one entry per in-rack unit, counted
    N+1 for this rack alone); a rack with its own CDUs draws nothing from its row's. Both may be stated: the
    loop then bounds what the rack's CDUs may carry."""

    kind: Literal["liquid"]
    liquid_kw: Kw | None = None
    cdu_kw: Annotated[list[Kw], Field(max_length=64)] = []
    cdu_pumps: Literal["n", "n+1"] = Field("n", description=(
        "n+1: each in-rack CDU has a spare pump (as the in-rack units sold for NVL72 racks), so a pump failure "
        "costs no capacity and the units count in full; n: a failure takes out a whole unit (Σ − largest)"))
    air_kw: Kw | None = None

    @model_validator(mode="after")
    def _loop_or_cdus(self) -> LiquidCooling:
        if self.liquid_kw is None and not self.cdu_kw:
            raise ValueError("a liquid rack states its loop capacity (liquid_kw), its own CDUs (cdu_kw: [kW, ...]) "
                             "or both")
        return self


RackCooling = Annotated[
    AirCooling | ContainmentCooling | RdhxCooling | LiquidCooling, Field(discriminator="kind")
]


RackRole = Literal["compute", "network"]


class Rack(Strict):
    """One rack. `role: network` sets it aside for the fabric: the planner puts the fabric's switches there and
    no pools (explicit `devices` may still stand in it). Without any network rack the switches go into the room
    the pools leave (plan/switches.py)."""

    name: ObjectName
    role: RackRole = "compute"
    u_height: Annotated[int, figure("U", 60, 1, inclusive=True)] = 42
    max_weight_kg: Kg = 1361
    tare_weight_kg: Annotated[float, figure("kg", 10_000, inclusive=True)] = 150
    footprint_m2: Annotated[float, figure("m²", 20)] = 0.72
    reserved_u: Annotated[int, figure("U", 60, inclusive=True)] = 0
    mounting_depth_mm: Annotated[int, figure("mm", 2000, 100, inclusive=True)] | None = None
    airflow: Airflow = "front-to-rear"
    contracted_kw: Kw | None = None
    cooling: RackCooling = AirCooling(kind="air")
    feeds: list[Feed] = []
    devices: list[Placement] = []

    @model_validator(mode="before")
    @classmethod
    def _name_feeds(cls, data: Any) -> Any:
        """Feeds may omit `name`: they become `<rack>-a1`, `<rack>-b1`, … (compact blueprints rely on it)."""
        if not isinstance(data, dict) or not isinstance(data.get("feeds"), list):
            return data
        feeds = data["feeds"]
        if all(not isinstance(f, dict) or "name" in f for f in feeds):
            return data
        per_side: dict[str, int] = {}
        named = []
        for feed in feeds:
            if isinstance(feed, dict) and "name" not in feed:
                side = str(feed.get("side", "x"))
                per_side[side] = per_side.get(side, 0) + 1
                feed = {"name": f"{data.get('name', 'rack')}-{side.lower()}{per_side[side]}", **feed}
            named.append(feed)
        return {**data, "feeds": named}


class RowCooling(Strict):
    """Row-level plant: CRAH air units and CDUs, each listed so N+1 can discount the largest. Racks with CDUs of
    their own (`cooling.cdu_kw`) send no liquid heat to the row's CDUs."""

    crah_kw: list[Kw] = []
    cdu_kw: list[Kw] = []


class Row(Strict):
    name: ObjectName
    cooling: RowCooling = RowCooling()
    racks: list[Rack]


class Site(Strict):
    name: ObjectName
    floor_load_kg_per_m2: Annotated[float, figure("kg/m²", 100_000)] | None = None
    max_inlet_c: Celsius | None = None
    inlet_class: InletClass | None = None
    facility_water_class: WaterClass | None = None
    max_supply_water_c: Celsius | None = None
    pue: Annotated[float, figure("", 5, 1, inclusive=True)] | None = None  # facility power / IT power
    energy_usd_per_kwh: Annotated[float, figure("USD/kWh", 10)] | None = None  # the site's tariff, for its cost
    contracted_it_kw: Kw | None = None
    utility_kw: Kw | None = None
    contracted_kw_per_rack: Kw | None = None
    panels: list[Panel] = []
    power_sources: list[PowerSource] = Field([], description=(
        "UPS systems, switchboards, generators and utility feeds that panels draw from (panels[].fed_by): each is "
        "a single element whose loss the power rules judge (docs/power-topologies.md)"))
    rows: list[Row]
    networks: SiteNetworks | None = Field(None, description=(
        "the site's provisioning and management networks: every node's and BMC's address is allocated from them "
        "(docs/bare-metal.md, \"The address plan\")"))

    def racks(self) -> list[tuple[int, int, Row, Rack]]:
        """Every rack with its row and indexes, in blueprint order."""
        return [(ri, ki, row, rack) for ri, row in enumerate(self.rows) for ki, rack in enumerate(row.racks)]

