"""Numbers as machine outputs write them: rounded, so a float's binary noise never reaches a reader.

A sum of floats such as 0.1 + 0.2 is 0.30000000000000004, and a load computed as 174 can come out as
173.99999999999997; JSON, SARIF and JUnit would carry those digits, and a baseline keyed on them would change
with the order of a sum. Values keep three decimals, small ones four significant digits (a ratio of 0.00012
stays 0.00012); integers and non-finite values are left as they are.
"""

from __future__ import annotations

import math
import re
from typing import Any

DECIMALS = 3
SIGNIFICANT = 4
# a decimal with more digits after the point than a rounded figure has: binary noise written out by str()
_NOISY = re.compile(r"(?<![\w.])(-?\d+\.\d{7,})(?![\w.])")


def tidy(value: Any) -> Any:
    """`value` rounded if it is a finite float, else unchanged."""
    if not isinstance(value, float) or not math.isfinite(value) or value == 0:
        return value
    if abs(value) >= 10 ** -DECIMALS:
        return round(value, DECIMALS)
    return float(f"{value:.{SIGNIFICANT}g}")


def tidy_all(data: Any) -> Any:
    """`data` (plain JSON data) with every float in it rounded."""
    if isinstance(data, float):
        return tidy(data)
    if isinstance(data, dict):
        return {key: tidy_all(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [tidy_all(value) for value in data]
    return data


def tidy_text(text: str) -> str:
    """`text` with each long decimal (seven or more digits after the point) rounded as `tidy` rounds it."""
    return _NOISY.sub(lambda m: _short(tidy(float(m.group(1)))), text) if "." in text else text


def _short(value: float) -> str:
    return f"{value:.{DECIMALS}f}".rstrip("0").rstrip(".") if abs(value) >= 10 ** -DECIMALS else repr(value)
