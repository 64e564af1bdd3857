"""slurm.conf(5) and cgroup.conf(5) parameter names per SLURM release, as catalog data.

`slurm.settings` passes keys through to slurm.conf, and slurmctld refuses to start on a key its release does not
know (`error: Parsing error at unrecognized key`), so SLM-008 checks them against the pinned release's list
before anything is deployed. The lists are read from each release's man pages; the data file says how.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from clusterforge.catalog.software import Release, Source, version_tuple

DATA = "slurm-parameters.yaml"
File = Literal["slurm_conf", "node", "partition", "cgroup_conf"]
Names = Annotated[list[Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]], Field(max_length=1000)]


class _Release(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Source
    slurm_conf: Names
    node: Names
    partition: Names
    cgroup_conf: Names


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    apiVersion: Literal["clusterforge/v1"]
    kind: Literal["SlurmParameters"]
    releases: dict[Release, _Release]


@dataclass(frozen=True)
class ReleaseParameters:
    """The parameter names of one release's configuration files, as its man pages document them."""

    release: str
    source: str
    names: dict[str, dict[str, str]]  # file -> lowercased name -> the name as documented

    def canonical(self, file: File, key: str) -> str | None:
        """`key` as the man page spells it (SLURM reads keys case-insensitively), or None when unknown."""
        return self.names[file].get(key.lower())

    def known(self, file: File) -> list[str]:
        return list(self.names[file].values())


@lru_cache(maxsize=1)
def releases() -> dict[str, ReleaseParameters]:
    """Every release with a parameter list, by major.minor ("24.11")."""
    text = (resources.files("clusterforge.catalog") / "data" / DATA).read_text(encoding="utf-8")
    data = _File.model_validate(yaml.safe_load(text))
    files = ("slurm_conf", "node", "partition", "cgroup_conf")
    return {release: ReleaseParameters(release, row.source, {
        file: {name.lower(): name for name in getattr(row, file)} for file in files})
        for release, row in data.releases.items()}


def release_of(version: str) -> str:
    """The major.minor release a version pin names: "24.11.5" and "24.11" are 24.11."""
    return ".".join(str(part).zfill(2) if i else str(part) for i, part in enumerate(version_tuple(version)[:2]))


def for_version(version: str) -> ReleaseParameters | None:
    """The parameter lists of the release `version` belongs to, or None when none is recorded."""
    return releases().get(release_of(version))
