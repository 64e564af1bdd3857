"""Plausible figures and the unit slips that leave them: a rack's `air_kw: 60000` is 60 kW written in W, a feed's
`voltage: 0.415` is 415 V written in kV.

A figure's unit is in its field's name (`_kw`, `_kg`, `_m2`, `_mm`, `_c`, `voltage`, `amps`, ...: the blueprint's
contract), so the figures are found by walking the blueprint's models, never from a list of fields: a new field
with a unit suffix is judged by itself. Its plausible range is the one declared for the nearest enclosing scope
(`site.rows[].racks[]` for every kW figure of a rack and its cooling; a field's own path where it differs, such
as `site.contracted_kw_per_rack`). A value is a slip when it lies outside its range and one of its unit's usual
confusions (W for kW, kV for V, t for kg, °F for °C, ...) brings it inside: an implausible value with no such
reading is left to the rules that judge it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from types import UnionType
from typing import Annotated, Any, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel

# The unit of a figure by the end of its field's name; the longest ending that matches wins.
SUFFIXES: dict[str, str] = {
    "_kg_per_m2": "kg/m²", "_usd_per_kwh": "USD/kWh", "_kw_per_rack": "kW", "_kw": "kW", "_kg": "kg",
    "_m2": "m²", "_mm": "mm", "_c": "°C", "_gib": "GiB",
}
NAMES: dict[str, str] = {"voltage": "V", "amps": "A"}  # fields whose whole name is their quantity


@cache
@cache
def unit_of(field: str) -> str | None:
    """The unit a field's name declares (`air_kw` and a bare `kw` → kW, `voltage` → V), or None."""
    if field in NAMES:
        return NAMES[field]
    return next((SUFFIXES[s] for s in sorted(SUFFIXES, key=len, reverse=True) if f"_{field}".endswith(s)), None)


@dataclass(frozen=True)
class Slip:
    """Another unit a figure is often written in: the figure in this unit is (value + offset) × scale."""

    unit: str
    scale: float
    offset: float = 0.0

    def convert(self, value: float) -> float:
        return (value + self.offset) * self.scale


SLIPS: dict[str, tuple[Slip, ...]] = {
    "kW": (Slip("W", 1e-3),),
    "V": (Slip("kV", 1e3),),
    "A": (Slip("kA", 1e3),),
    "kg": (Slip("t", 1e3),),
    "m²": (Slip("ft²", 0.09290304),),  # 1 ft = 0.3048 m; cm² would exceed the model's 20 m² bound, refused at load
    "kg/m²": (Slip("t/m²", 1e3), Slip("kN/m²", 1e3 / 9.80665)),
    "mm": (Slip("cm", 10),),  # m and inches fall below the model's 100 mm floor, refused at load
    "°C": (Slip("°F", 5 / 9, -32),),
    "USD/kWh": (Slip("US cents/kWh", 1e-2),),
}


@dataclass(frozen=True)
class Range:
    """The plausible figures of a scope, low to high in the unit, and where they come from."""

    low: float
    high: float
    source: str


RACK = "site.rows[].racks[]"
_RACK_KW = ("a rack: 15–41 kW on air (aidatacenterguide ch. 5.3), rear doors to 75 kW (HPE RDHx bands), direct "
            "liquid 50–120+ kW, GB300 NVL72 up to 142 kW (NVIDIA NVL72 Enterprise RA); in-rack CDUs to 250 kW [U]")

# unit → scope (a field path without indexes, or a prefix of one; "" is every field of the unit) → range.
RANGES: dict[str, dict[str, Range]] = {
    "kW": {
        "pools[]": Range(0.01, 1000, "a device's draw: lab nodes 0.05 kW, DGX H100 10.2 kW and DGX B200 14.3 kW "
                         "(NVIDIA user guides), a GB300 NVL72 rack as one device 142 kW (NVIDIA NVL72 Enterprise RA)"),
        RACK: Range(1, 250, _RACK_KW),
        "site.rows[].cooling": Range(5, 3000, "one row cooling unit: CRAH units of tens to a few hundred kW, row "
                                     "CDUs to about 2 MW [U]"),
        "site": Range(1, 1_000_000, "a site's budget, up to the model's 1 GW bound: a site figure in W is judged "
                      "against the design by PWR-008"),
        "site.contracted_kw_per_rack": Range(1, 250, _RACK_KW),
    },
    "V": {"": Range(100, 1000, "AC distribution: 120–480 V (NEC), 230/400 V and 240/415 V (IEC 60038); low "
                    "voltage is at most 1,000 V (IEC 60038)")},
    "A": {
        "": Range(10, 800, "a rack feed: 30, 32 and 60 A circuits (HP, Power basics for IT professionals), IEC 60309 "
                  "16–125 A and NEMA 20–60 A whips; busway tap-offs to a few hundred A [U]"),
        "site.panels[]": Range(16, 6300, "a panel or busway section: breaker frames up to 6,300 A [U]"),
    },
    "kg": {"": Range(10, 5000, "a rack: UL 2416 static ratings, 1,361 kg (3,000 lb) common; GB200 NVL72 1.36 t "
                     "loaded (NVIDIA); empty cabinets 60–250 kg and heavy-duty ratings to about 2,300 kg [U]")},
    "m²": {"": Range(0.25, 4, "a rack's footprint: 600 × 600 mm (0.36 m²) to 800 × 1,200 mm (0.96 m²); wide "
                     "liquid-cooled racks to about 1.5 m² [U]")},
    "kg/m²": {"": Range(250, 5000, "a floor rating: 2.5 kN/m² (offices) to about 20 kN/m² (heavy data halls), "
                        "255–2,040 kg/m² [U]; 1,500 kg/m² in the blueprint contract's example")},
    "mm": {"": Range(450, 1300, "a mounting depth: racks 600–1,200 mm deep [U]; DGX B200 897 mm (NVIDIA user guide)")},
    "°C": {
        "site.max_inlet_c": Range(5, 45, "ASHRAE TC9.9 allowable inlet air: A1 15–32, A2 10–35, A3 5–40, A4 5–45 °C"),
        "site.max_supply_water_c": Range(2, 65, "ASHRAE facility water classes W17–W45, W+ above 45 °C; above 65 °C "
                                         "[U]"),
    },
    "USD/kWh": {"": Range(0.01, 1, "an electricity tariff: planning figures of $0.04–0.18/kWh (the price catalog's "
                          "energy_usd_per_kwh source) [U beyond]")},
}


def number(value: float) -> str:
    """A figure as a reader writes it: 60000.0 as 60,000, 415.00000000000006 as 415, 26.666… as 26.67."""
    exact = float(f"{value:.10g}")
    shown = exact if exact.is_integer() else float(f"{value:.4g}")
    return f"{int(shown):,}" if shown.is_integer() else f"{shown:,}"


def scope_of(kind: str, scopes: dict[str, Any]) -> str | None:
    """The most specific scope of `scopes` that holds the field `kind` (`site.rows[].racks[].cooling.air_kw` is in
    `site.rows[].racks[]`, and that in `site`), or None."""
    held = [s for s in scopes if s == "" or kind == s or kind.startswith((f"{s}.", f"{s}["))]
    return max(held, key=len) if held else None


def slips(value: float, unit: str, plausible: tuple[float, float]) -> list[Slip]:
    """The confusions that bring an implausible `value` inside `plausible` (none when it is plausible already)."""
    low, high = plausible
    if low <= value <= high:
        return []
    return [slip for slip in SLIPS.get(unit, ()) if low <= slip.convert(value) <= high]


class Figure(NamedTuple):
    """One value of a figure in the blueprint: where it is, which field it is and who holds it (a tuple: a hall
    yields tens of thousands, and a frozen dataclass costs several times as much to make)."""

    path: tuple[str | int, ...]
    kind: str  # the field's path without indexes: `site.rows[].racks[].feeds[].voltage`
    unit: str
    value: float
    owner: tuple[str, str]  # the nearest named object holding it: ("feed", "a01-a"); ("cluster", name) at the top
    field: str  # the field's path below that object: `voltage`, `cooling.air_kw`
    row: str | None  # the row and rack it is in, where it is in one
    rack: str | None


@cache
def _has_name(model: type[BaseModel]) -> bool:
    return "name" in model.model_fields


def _named(value: Any) -> str | None:
    """The model's `name`, where its class has one (asked of the class: a missing attribute costs pydantic a
    slow lookup, tens of thousands of times in a hall)."""
    if not (isinstance(value, BaseModel) and _has_name(type(value))):
        return None
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else None


@cache
def _walked(model: type[BaseModel]) -> tuple[tuple[str, str | None], ...]:
    """The fields of a model class `figures` looks into, with the unit each declares (or None): those with a unit
    and those whose type may hold a model; a hall repeats a few classes tens of thousands of times, and the rest of
    their fields (names, enums, text) can hold neither."""
    return tuple((name, unit_of(name)) for name, info in model.model_fields.items()
                 if unit_of(name) is not None or _may_hold_model(info.annotation))


def _may_hold_model(annotation: Any) -> bool:
    """Whether a value of this type may be a model or hold one, at any depth of the type (an untyped part may)."""
    return annotation is Any or annotation is object or (
        isinstance(annotation, type) and issubclass(annotation, BaseModel)) or any(
        _may_hold_model(arg) for arg in get_args(annotation))


def figures(root: BaseModel) -> Iterator[Figure]:
    """Every number of `root` (a blueprint) whose field's name declares a unit, in document order."""
    stack: list[tuple[BaseModel, tuple[str | int, ...], str, tuple[str, str], str, str | None, str | None]] = [
        (root, (), "", ("cluster", _named(root) or ""), "", None, None)]
    while stack:
        model, path, kind, owner, below, row, rack = stack.pop()
        found: list[Any] = []
        for name, unit in _walked(type(model)):
            value = getattr(model, name)
            if value is None:
                continue
            there, field = f"{kind}.{name}" if kind else name, f"{below}.{name}".lstrip(".")
            if isinstance(value, list | tuple):
                noun = name.removesuffix("s")
                for index, item in enumerate(value):
                    if isinstance(item, BaseModel):
                        named = _named(item)
                        found.append((item, (*path, name, index), f"{there}[]",
                                      *(((noun, named), "") if named is not None else (owner, field)),
                                      named if noun == "row" else row, named if noun == "rack" else rack))
                    elif unit is not None and isinstance(item, int | float) and not isinstance(item, bool):
                        yield Figure((*path, name, index), there, unit, float(item), owner, field, row, rack)
            elif isinstance(value, BaseModel):
                named = _named(value)
                found.append((value, (*path, name), there,
                              *(((name, named), "") if named is not None else (owner, field)),
                              named if name == "row" else row, named if name == "rack" else rack))
            elif unit is not None and isinstance(value, int | float) and not isinstance(value, bool):
                yield Figure((*path, name), there, unit, float(value), owner, field, row, rack)
        stack.extend(reversed(found))


def _listed(annotation: Any) -> bool:
    """Whether a field holds a list (through optionals and Annotated)."""
    origin = get_origin(annotation)
    if origin is list:
        return True
    if origin is Annotated:
        return _listed(get_args(annotation)[0])
    return origin in (Union, UnionType) and any(_listed(arg) for arg in get_args(annotation))


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models(arg)]


@cache
def kinds(root: type[BaseModel]) -> dict[str, str]:
    """Every figure field a model can hold, as `kind` → unit (through lists, optionals and unions)."""
    out: dict[str, str] = {}
    seen: set[tuple[type[BaseModel], str]] = set()
    work: list[tuple[type[BaseModel], str]] = [(root, "")]
    while work:
        model, prefix = work.pop()
        for name, field in model.model_fields.items():
            path = f"{prefix}.{name}" if prefix else name
            subs = _models(field.annotation)
            listed = _listed(field.annotation)
            for sub in subs:
                key = (sub, path)
                if key not in seen:
                    seen.add(key)
                    work.append((sub, path + ("[]" if listed else "")))
            if not subs and (unit := unit_of(name)) is not None:
                out[path] = unit
    return dict(sorted(out.items()))
