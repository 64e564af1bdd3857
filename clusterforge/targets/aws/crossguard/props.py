"""Reading Pulumi resource props safely: camelCase wire names, numbers as floats, unknowns during preview.

The engine hands policies read-only proxies (a Mapping and a Sequence, not dict and list) that raise
UnknownValueError on a value not known until deploy. A policy that lets that escape is reported as
"can't run during preview"; these helpers turn it into UNKNOWN so a rule can skip just that value.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from pulumi_policy.proxy import UnknownValueError


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()
"""A value Pulumi will only know at deploy time (an id of a resource not yet created)."""


def read(value: Any, *path: str | int) -> Any:
    """The value at `path` (keys and list indexes), None when absent, UNKNOWN when not known yet."""
    try:
        for key in path:
            if isinstance(key, int):
                if not is_list(value) or not -len(value) <= key < len(value):
                    return None
                value = value[key]
            else:
                if not isinstance(value, Mapping) or key not in value:
                    return None
                value = value[key]
    except UnknownValueError:
        return UNKNOWN
    return value


def is_list(value: Any) -> bool:
    """A JSON array as props carry it (a list, or the engine's read-only sequence proxy), not a string."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def elements(value: Any) -> Iterator[Any]:
    """The items of a list prop (each may be UNKNOWN); nothing for an absent or unknown list."""
    if is_list(value):
        for index in range(len(value)):
            yield read(value, index)


def as_int(value: Any) -> int | None:
    """A whole number from a prop (`32.0` arrives for 32), or None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def as_text(value: Any) -> str | None:
    """A known string prop, or None (absent, unknown or another type)."""
    return value if isinstance(value, str) else None
