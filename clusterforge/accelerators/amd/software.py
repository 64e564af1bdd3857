"""AMD's software table: the RCCL each ROCm release ships and the amdgpu driver series AMD lists for it. The rows
are data with a source each (data/software.yaml beside this file); SW-001 checks a ROCm pool's pins against them
(software_checks.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from clusterforge.catalog.software import Release, Row


class RocmRow(Row):
    KEY = "rocm"
    DOC = ("`rocm`, `rccl`, `amdgpu` (driver series)", "AMD pools: RCCL is the one ROCm ships, the amdgpu driver is "
           "of a listed series")
    rocm: Release
    rccl: Release = Field(description="the RCCL release ROCm ships")
    amdgpu: Annotated[list[Release], Field(max_length=50, description=(
        "amdgpu driver series (major.minor) AMD's matrix lists as compatible; empty: not recorded"))] = []


TABLES = (RocmRow,)
