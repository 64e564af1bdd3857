"""Cooling rules: rack air ceilings, liquid where needed, hybrid split, row N+1, inlet and water classes, airflow."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from clusterforge.model import LiquidCooling
from clusterforge.physics.budget import exceeds, reaches
from clusterforge.plan.capacity import in_rack_cdu_kw, n_plus_one_kw, own_cdus, room_heat_kw
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context, rack_ref
from clusterforge.policies.findings import Draft, RowRef
from clusterforge.policies.inputs import HELD, PLACED, RACK, Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("cooling", "Cooling", 30)

INLET_CLASS_MAX_C = {"A1": 32.0, "A2": 35.0, "A3": 40.0, "A4": 45.0}  # ASHRAE TC9.9 allowable maxima
WATER_CLASS_MAX_C = {"W17": 17.0, "W27": 27.0, "W32": 32.0, "W40": 40.0, "W45": 45.0, "W+": 60.0}


class AirCeilingSettings(Settings):
    warn_fraction: float = Field(0.8, gt=0, le=1, description="warn at this share of the rack's air capacity")


@rule("CLG-001", "error", DOMAIN, "Air-cooled rack ceiling",
      "aidatacenterguide ch. 5.3 (air 30 kW, containment 40 kW); HPE RDHx bands 14-35/35-55/55-75 kW",
      AirCeilingSettings, needs_site=True,
      inputs=Inputs((f"{RACK}.cooling.{{kind,air_kw}}", *PLACED), ("max_power_kw", "liquid_heat_fraction"),
             ("cooling",), "a `warning` when a rack uses `warn_fraction` or more of its air capacity"))
def air_ceiling(ctx: Context, settings: AirCeilingSettings) -> Iterator[Draft]:
    """A rack without liquid cooling rejects its heat to air within its capacity (stated, or the kind's default)."""
    for load, rack in ctx.racks():
        if rack.cooling.kind == "liquid" or not load.air_heat_kw:
            continue
        capacity = ctx.config.cooling.air_capacity_kw(rack.cooling.kind, rack.cooling.air_kw)
        path = (*load.rack.path, "cooling")
        if exceeds(load.air_heat_kw, capacity, "kW"):
            yield Draft(path, f"rack {rack.name} rejects {load.air_heat_kw:.1f} kW to air; {rack.cooling.kind} "
                        f"cooling removes {capacity:g} kW", "add a rear-door heat exchanger, containment or liquid "
                        "cooling, or move a server", load.air_heat_kw, capacity, "kW", where=rack_ref(load))
        elif reaches(load.air_heat_kw, settings.warn_fraction * capacity, "kW"):
            yield Draft(path, f"rack {rack.name} uses {load.air_heat_kw / capacity:.0%} of its {capacity:g} kW "
                        f"air cooling", "little headroom for hot days or fan failures", load.air_heat_kw, capacity,
                        "kW", level="warning", where=rack_ref(load))


@rule("CLG-002", "error", DOMAIN, "Liquid-cooled hardware needs liquid", "NVIDIA GB200 NVL72 user guide",
      needs_site=True,
      inputs=Inputs((f"{RACK}.cooling.kind", *HELD), ("cooling",)))
def liquid_needed(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Liquid or hybrid-cooled hardware stands only in racks with liquid cooling (kind: liquid)."""
    for load, rack in ctx.racks():
        if rack.cooling.kind == "liquid":
            continue
        for placed, server in load.servers:
            if server.cooling != "air":
                yield Draft(placed.path or load.rack.path,
                            f"{placed.pool} ({server.cooling}-cooled) stands in rack {rack.name} whose cooling is "
                            f"{rack.cooling.kind}", "give the rack cooling: {kind: liquid, liquid_kw: ...}",
                            where=rack_ref(load))


@rule("CLG-003", "error", DOMAIN, "Hybrid liquid/air split",
      "~15-30 % of a direct-liquid-cooled rack's heat still goes to air; fraction from the catalog", needs_site=True,
      inputs=Inputs((f"{RACK}.cooling.{{kind,liquid_kw,air_kw}}", *PLACED),
             ("max_power_kw", "liquid_heat_fraction"), ("cooling",)))
def hybrid_split(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """In a liquid rack, f·P ≤ the loop's liquid_kw (when stated) and (1−f)·P ≤ the rack's air capacity (f from
    the catalog); a rack's own CDUs are checked N+1 by CLG-004."""
    for load, rack in ctx.racks():
        cooling = rack.cooling
        if cooling.kind != "liquid" or not load.power_kw:
            continue
        path = (*load.rack.path, "cooling")
        if cooling.liquid_kw is not None and exceeds(load.liquid_heat_kw, cooling.liquid_kw, "kW"):
            yield Draft((*path, "liquid_kw"), f"rack {rack.name} sends {load.liquid_heat_kw:.1f} kW to liquid; its "
                        f"loop removes {cooling.liquid_kw:g} kW", "raise the CDU/loop capacity or move a system",
                        load.liquid_heat_kw, cooling.liquid_kw, "kW", where=rack_ref(load))
        air_capacity = ctx.config.cooling.air_capacity_kw("liquid", cooling.air_kw)
        if exceeds(load.air_heat_kw, air_capacity, "kW"):
            yield Draft(path, f"rack {rack.name} still rejects {load.air_heat_kw:.1f} kW to air (the non-liquid "
                        f"share); it has {air_capacity:g} kW of air cooling", "state air_kw for the rack or add a "
                        "rear-door heat exchanger", load.air_heat_kw, air_capacity, "kW", where=rack_ref(load))


@rule("CLG-004", "error", DOMAIN, "Row and in-rack cooling N+1",
      "N+1 practice: capacity counted = total − largest unit", needs_site=True,
      inputs=Inputs(("site.rows[].cooling.{crah_kw,cdu_kw}", f"{RACK}.cooling.{{kind,air_kw,cdu_kw,cdu_pumps}}",
                     *PLACED),
             ("max_power_kw", "liquid_heat_fraction")))
def row_redundancy(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Per row: room air heat ≤ Σ CRAH − largest CRAH, liquid heat ≤ Σ CDU − largest CDU; a rack with CDUs of
    its own keeps its liquid heat off the row's and within Σ of its CDUs − the largest, or within all of them
    when each has a spare pump (`cdu_pumps: n+1`: a pump failure costs no capacity)."""
    room: dict[int, float] = {}
    liquid: dict[int, float] = {}
    for load, rack in ctx.racks():
        room[load.rack.row_index] = room.get(load.rack.row_index, 0.0) + room_heat_kw(load.air_heat_kw, rack)
        if not own_cdus(rack):
            liquid[load.rack.row_index] = liquid.get(load.rack.row_index, 0.0) + load.liquid_heat_kw
            continue
        assert isinstance(rack.cooling, LiquidCooling)
        units = rack.cooling.cdu_kw
        n_plus_1 = in_rack_cdu_kw(rack.cooling)
        if load.liquid_heat_kw and exceeds(load.liquid_heat_kw, n_plus_1, "kW"):
            spare = (f"{', '.join(f'{u:g}' for u in units)} kW with a spare pump each"
                     if rack.cooling.cdu_pumps == "n+1" else _units(units, n_plus_1))
            yield Draft((*load.rack.path, "cooling", "cdu_kw"),
                        f"rack {rack.name} puts {load.liquid_heat_kw:.1f} kW of heat on its in-rack liquid (CDU) "
                        f"plant; {spare}", "add an in-rack CDU (or one with a spare pump: cdu_pumps: n+1) or move "
                        "a system", load.liquid_heat_kw, n_plus_1, "kW", where=rack_ref(load))
    for ri, row in enumerate(ctx.site.rows):
        for heat, units, key, what in ((room.get(ri, 0.0), row.cooling.crah_kw, "crah_kw", "air (CRAH)"),
                                       (liquid.get(ri, 0.0), row.cooling.cdu_kw, "cdu_kw", "liquid (CDU)")):
            if not heat or (not units and key == "crah_kw"):
                continue
            n_plus_1 = n_plus_one_kw(units)
            if exceeds(heat, n_plus_1, "kW"):
                detail = _units(units, n_plus_1)
                yield Draft(("site", "rows", ri, "cooling", key),
                            f"row {row.name} puts {heat:.1f} kW of heat on its {what} plant; {detail}",
                            "add a unit or move load to another row", heat, n_plus_1, "kW", where=RowRef(row.name))


def _units(units: list[float], n_plus_1: float) -> str:
    if not units:
        return "no units are listed"
    return (f"{len(units)} unit{'s' if len(units) != 1 else ''} of {', '.join(f'{u:g}' for u in units)} kW give "
            f"{n_plus_1:g} kW with the largest out")


def room_inlet_c(ctx: Context) -> tuple[float, tuple[str, ...]] | None:
    site = ctx.site
    if site.max_inlet_c is not None:
        return site.max_inlet_c, ("site", "max_inlet_c")
    if site.inlet_class is not None:
        return INLET_CLASS_MAX_C[site.inlet_class], ("site", "inlet_class")
    return None


@rule("CLG-005", "error", DOMAIN, "Inlet temperature class", "ASHRAE TC9.9 (A1 32, A2 35, A3 40, A4 45 °C)",
      needs_site=True,
      inputs=Inputs(("site.{max_inlet_c,inlet_class}", *HELD), ("max_inlet_c",)))
def inlet_class(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The hottest inlet air the room allows is within every placed device's maximum inlet temperature."""
    room = room_inlet_c(ctx)
    if room is None:
        return
    inlet, path = room
    placed = {p.pool for load in ctx.plan.loads for p, _ in load.servers}
    for pool in ctx.cluster.pools:
        server = ctx.server(pool)
        if server is not None and pool.name in placed and exceeds(inlet, server.max_inlet_c, "°C"):
            yield Draft(path, f"the room allows inlet air up to {inlet:g} °C; {pool.hardware} (pool {pool.name}) "
                        f"is rated to {server.max_inlet_c:g} °C", "cool the room to a lower class or choose "
                        "hardware rated for it", inlet, server.max_inlet_c, "°C")


@rule("CLG-006", "error", DOMAIN, "Facility water class", "ASHRAE liquid cooling classes (W17-W45, W+)",
      needs_site=True,
      inputs=Inputs(("site.{max_supply_water_c,facility_water_class}", *HELD), ("max_supply_water_c",)))
def water_class(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The facility's warmest supply water is within every liquid-cooled device's maximum supply temperature."""
    site = ctx.site
    if site.max_supply_water_c is not None:
        water, path = site.max_supply_water_c, ("site", "max_supply_water_c")
    elif site.facility_water_class is not None:
        water, path = WATER_CLASS_MAX_C[site.facility_water_class], ("site", "facility_water_class")
    else:
        return
    placed = {p.pool for load in ctx.plan.loads for p, _ in load.servers}
    for pool in ctx.cluster.pools:
        server = ctx.server(pool)
        if server is None or pool.name not in placed or server.max_supply_water_c is None:
            continue
        if exceeds(water, server.max_supply_water_c, "°C"):
            yield Draft(path, f"facility water reaches {water:g} °C; {pool.hardware} accepts supply water up to "
                        f"{server.max_supply_water_c:g} °C", "use a colder water class or a CDU with a trim chiller",
                        water, server.max_supply_water_c, "°C")


class AirflowSettings(Settings):
    delta_t_f: float = Field(20.0, gt=0, description="air temperature rise across servers in °F (11 °C)")


@rule("CLG-007", "warning", DOMAIN, "Airflow delivered", "Dell, Calculating CFMs: CFM = 3.16 · W / ΔT°F",
      AirflowSettings, needs_site=True,
      inputs=Inputs((f"{RACK}.cooling.delivered_cfm", *PLACED), ("max_power_kw", "liquid_heat_fraction")))
def airflow_delivered(ctx: Context, settings: AirflowSettings) -> Iterator[Draft]:
    """The air a rack needs, 3.16 · W / ΔT°F CFM, is within what the room delivers to it (when stated)."""
    for load, rack in ctx.racks():
        delivered = rack.cooling.delivered_cfm
        if delivered is None or not load.air_heat_kw:
            continue
        needed = 3.16 * load.air_heat_kw * 1000 / settings.delta_t_f
        if exceeds(needed, delivered, "CFM"):
            yield Draft((*load.rack.path, "cooling", "delivered_cfm"),
                        f"rack {rack.name} needs {needed:.0f} CFM for {load.air_heat_kw:.1f} kW at ΔT "
                        f"{settings.delta_t_f:g} °F; {delivered:g} CFM is delivered", "raise airflow (more perforated "
                        "tiles, fan speed) or lower the rack's air heat", needed, delivered, "CFM",
                        where=rack_ref(load))
