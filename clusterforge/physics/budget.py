"""Budget comparisons that hold exactly at their published boundary.

Loads are sums and products of decimal figures that binary floating point cannot represent: 3 × 1.1 kW is
3.3000000000000003 and 4 × 14.5 kW × 0.8 is 46.400000000000006, so a naive `load > limit` fails a feed, loop or
CDU rated exactly for the load. Every budget rule compares through here: both sides are rounded to the unit's
resolution (1 W, 1 g, 1 CFM, 0.01 % of a share, 0.1 °C) before they are compared, so a design at its limit passes and
one resolution unit above it fails, whatever order the arithmetic ran in.
"""

from __future__ import annotations

from typing import Final

# steps per unit: the resolution every budget in that unit is judged at (kW to the watt, kg to the gram)
STEPS: Final[dict[str, int]] = {
    "kW": 1_000,  # 1 W
    "kg": 1_000,  # 1 g
    "CFM": 1,  # 1 CFM, as airflow is rated
    "share": 10_000,  # a fraction to 0.01 percentage point
    "°C": 10,  # 0.1 °C
    "U": 1,
    "PSUs": 1,
}


def steps(value: float, unit: str) -> int:
    """`value` as a whole number of the unit's resolution steps (46.400000000000006 kW → 46,400 W)."""
    return round(value * STEPS[unit])


def exceeds(measured: float, limit: float, unit: str) -> bool:
    """`measured` is above `limit` by at least one resolution step of `unit` (equal at the resolution passes)."""
    return steps(measured, unit) > steps(limit, unit)


def reaches(measured: float, limit: float, unit: str) -> bool:
    """`measured` is at or above `limit` at the resolution of `unit` (for thresholds that start at a value)."""
    return steps(measured, unit) >= steps(limit, unit)


SEMANTICS: Final = (
    "Budgets hold exactly at their limit: a measured figure and its limit are both rounded to the unit's "
    "resolution (1 W for kW, 1 g for kg, 1 CFM, 0.01 % for shares, 0.1 °C) before they are compared, so a design "
    "at its published limit passes and one resolution unit above it fails, whatever binary rounding the "
    "arithmetic met on the way (4 × 14.5 kW × 0.8 is 46.4 kW, not 46.400000000000006)."
)
