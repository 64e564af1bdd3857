"""Shared base and constrained types for the blueprint models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from clusterforge.core.text import Name, ObjectName
from clusterforge.core.validation import figure

__all__ = ["Celsius", "Count", "Kg", "Kw", "Name", "NodeCount", "NonNegKw", "ObjectName", "SetsSlurm", "Strict"]


@dataclass(frozen=True)
class SetsSlurm:
    """Field metadata: the slurm.conf keys this blueprint field sets (`Annotated[int, SetsSlurm("SlurmdTimeout")]`),
    with a note for the reader. Declared on the field, so the list of keys a blueprint owns, which `slurm.settings`
    may not set as well (model/slurm_references.py), is derived and never kept by hand."""

    keys: tuple[str, ...]
    note: str = ""

    def __init__(self, *keys: str, note: str = "") -> None:
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "note", note)


class Strict(BaseModel):
    """Every blueprint model forbids unknown keys, so a typo is an error with a line, not a silent default.

    Numbers are finite: `.inf` or `.nan` would overflow a sum, print `Infinity` into JSON, or (NaN compares
    false) silently pass a limit.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

Kw = Annotated[float, figure("kW", 1_000_000)]
NonNegKw = Annotated[float, figure("kW", 1_000_000, inclusive=True)]
Kg = Annotated[float, figure("kg", 100_000)]
Celsius = Annotated[float, figure("°C", 80, -20, inclusive=True)]
Count = Annotated[int, Field(ge=1, le=10_000_000)]
NodeCount = Annotated[int, Field(ge=0, le=10_000_000)]  # a pool's always-on nodes: 0 is for power-saved pools only
