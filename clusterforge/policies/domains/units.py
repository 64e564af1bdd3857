"""Unit slips: a power, cooling, voltage, current, weight, area, depth or temperature figure that is implausible as
written and plausible in a unit it is often confused with (W for kW, kV for V, t for kg, °F for °C, ...).

A slip makes every rule that reads the figure judge a design nobody meant (a rack door of 60,000 kW passes every
cooling check; a 0.415 V feed fails every power check by 30,000 %). Those rules still run and report as they read
the figure (no rule silences another), but the slip is an error of its own, reported once per field and slip with
every place it occurs, and shown before every other finding (`leads`), so the cause is read before its effects.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints, model_validator

from clusterforge.core.hostlist import cut_to_width
from clusterforge.physics.assumptions import FINITE
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft, RackRef, RowRef, Where
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.plausible import RANGES, SLIPS, Figure, Slip, figures, kinds, number, scope_of, slips
from clusterforge.policies.registry import REGISTRY, domain, rule
from clusterforge.target_kernel import blueprint_model

DOMAIN = domain("units", "Units", 5)
NAMES_WIDTH = 60  # characters of the places' names a finding lists before `…(+N more)`


class Bounds(BaseModel):
    """A plausible range, low to high, in the figure's unit."""

    model_config = FINITE

    low: Annotated[float, Field(gt=0)]
    high: Annotated[float, Field(gt=0)]

    @model_validator(mode="after")
    def _ordered(self) -> Bounds:
        if self.low >= self.high:
            raise ValueError(f"low ({self.low:g}) must be under high ({self.high:g})")
        return self


def _defaults() -> str:
    return "; ".join(f"{unit} `{scope or '*'}` {number(r.low)}–{number(r.high)} ({r.source})"
                     for unit, scopes in RANGES.items() for scope, r in scopes.items())


Scope = Annotated[str, StringConstraints(max_length=200)]
Scopes = Annotated[dict[Scope, Bounds], Field(max_length=100)]


class UnitSettings(Settings):
    ranges: Annotated[dict[str, Scopes], Field(max_length=len(SLIPS))] = Field({}, description=(
        "plausible ranges over the defaults, by unit and scope (a field path without indexes, or a prefix of one; "
        "the most specific holds), e.g. `{kW: {'site.rows[].racks[]': {low: 1, high: 300}}}`. Defaults: "
        + _defaults()))

    @model_validator(mode="after")
    def _known(self) -> UnitSettings:
        fields = kinds(blueprint_model())
        for unit, scopes in self.ranges.items():
            if unit not in SLIPS:
                raise ValueError(f"unknown unit {unit!r}; units with slips: {', '.join(SLIPS)}")
            for scope in scopes:
                if scope and not any(f == scope or f.startswith((f"{scope}.", f"{scope}["))
                                     for f, u in fields.items() if u == unit):
                    raise ValueError(f"no {unit} figure lies at or under {scope!r}; e.g. "
                                     f"{next((f for f, u in fields.items() if u == unit), '')}")
        return self

    def plausible(self, kind: str, unit: str) -> tuple[float, float] | None:
        """The (low, high) the field `kind` is judged by, or None where no range covers it."""
        scopes = {scope: (r.low, r.high) for scope, r in RANGES.get(unit, {}).items()}
        scopes |= {scope: (b.low, b.high) for scope, b in self.ranges.get(unit, {}).items()}
        scope = scope_of(kind, scopes)
        return None if scope is None else scopes[scope]


def _fields() -> tuple[str, ...]:
    """The figure fields this rule reads, as Inputs lists them: every field whose unit has a slip."""
    return tuple(f for f, unit in kinds(blueprint_model()).items() if unit in SLIPS)


@rule("UNIT-001", "error", DOMAIN, "Figures in their field's unit",
      "NVIDIA DGX user guides and NVL72 RA, UL 2416, NEC, IEC 60038, ASHRAE TC9.9 (each range names its source); "
      "the confusions W/kW, kV/V, kA/A, t/kg, ft²/m², t/m² and kN/m² for kg/m², cm/mm, °F/°C, cents/USD",
      UnitSettings, leads=True,
      inputs=Inputs(_fields(), (), (), "one finding per field and slip lists every place it occurs; it is shown "
                    "before every other finding, and the rules that read the figure report on it as written"))
def unit_slips(ctx: Context, settings: UnitSettings) -> Iterator[Draft]:
    """Every figure lies in its plausible range, or in none that a usual unit confusion would bring it into: a rack's
    `air_kw: 60000` (60 kW in W) or a feed's `voltage: 0.415` (415 V in kV) is a slip."""
    found: dict[tuple[str, str], tuple[list[Figure], tuple[float, float], Slip]] = {}
    ranges: dict[str, tuple[float, float] | None] = {}  # by field: a hall repeats a few fields thousands of times
    for figure in figures(ctx.cluster):
        if figure.kind not in ranges:
            ranges[figure.kind] = settings.plausible(figure.kind, figure.unit)
        plausible = ranges[figure.kind]
        if plausible is None:
            continue
        for slip in slips(figure.value, figure.unit, plausible)[:1]:
            found.setdefault((figure.kind, slip.unit), ([], plausible, slip))[0].append(figure)
    for many, plausible, slip in found.values():
        yield _draft(many, plausible, slip)


def _draft(many: Sequence[Figure], plausible: tuple[float, float], slip: Slip) -> Draft:
    """One finding for every value of one field that reads as one slip, at the first one's line."""
    first = many[0]
    unit, (low, high) = first.unit, plausible
    values = sorted({f.value for f in many})
    said = number(values[0]) if len(values) == 1 else f"{number(values[0])}–{number(values[-1])}"
    noun, name = first.owner
    owners = list(dict.fromkeys(f.owner[1] for f in many))
    count = f"; {len(many):,} values" if len(many) > len(owners) else ""
    if len(owners) == 1:
        where = (f"{noun} {name}" if noun != "cluster" else "the cluster") + (f" ({count[2:]})" if count else "")
    else:
        where = f"{len(owners):,} {noun}s ({cut_to_width(owners, NAMES_WIDTH).text()}{count})"
    readers = _readers(first.kind)
    read = (f" ({', '.join(readers)} {'reads' if len(readers) == 1 else 'read'} it as written: "
            f"{'its findings' if len(readers) == 1 else 'their findings'} on it follow from this one)")
    return Draft(first.path, f"{first.field} is {said} {unit} on {where}, outside the plausible {number(low)}–"
                 f"{number(high)} {unit}",
                 f"is it in {slip.unit} rather than {unit}? {number(first.value)} {slip.unit} is "
                 f"{number(slip.convert(first.value))} {unit}" + (read if readers else ""),
                 first.value, None, unit, where=_where(many))


def _where(many: Sequence[Figure]) -> Where:
    """The one rack (or row) every value is in, for the report's rack cards; None where they span several."""
    places = {(f.row, f.rack) for f in many}
    if len(places) == 1:
        row, rack = next(iter(places))
        if row is not None and rack is not None:
            return RackRef(row, rack)
        if row is not None:
            return RowRef(row)
    return None


def _expand(listed: str) -> list[str]:
    """`a[].{b,c}` → `a[].b`, `a[].c`."""
    match = re.fullmatch(r"(.*)\.\{([^}]*)\}", listed)
    return [f"{match[1]}.{leaf}" for leaf in match[2].split(",")] if match else [listed]


@cache
def _readers(kind: str) -> tuple[str, ...]:
    """The other rules that read the field `kind`, from their declared inputs."""
    return tuple(r.id for r in sorted(REGISTRY.values(), key=lambda r: r.id)
                 if r.id != "UNIT-001" and any(kind in _expand(listed) for listed in r.inputs.fields))
