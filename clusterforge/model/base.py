"""Shared base and constrained types for the blueprint models."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints


class Strict(BaseModel):
    """Every blueprint model forbids unknown keys, so a typo is an error with a line, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,39}$")]
"""A lowercase DNS-style name: it becomes hostnames, SLURM names and cloud resource names."""

ObjectName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")]
"""Facility object names (rows, racks, feeds, panels) as people write them on labels."""

Kw = Annotated[float, Field(gt=0, le=1_000_000)]
NonNegKw = Annotated[float, Field(ge=0, le=1_000_000)]
Kg = Annotated[float, Field(gt=0, le=100_000)]
Celsius = Annotated[float, Field(ge=-20, le=80)]
Count = Annotated[int, Field(ge=1, le=10_000_000)]
