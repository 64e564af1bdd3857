"""slurm.conf(5) and cgroup.conf(5) parameter names per SLURM release, as catalog data.

`slurm.settings` passes keys through to slurm.conf, and slurmctld refuses to start on a key its release does not
know (`error: Parsing error at unrecognized key`), so SLM-008 checks them against the pinned release's list
before anything is deployed. The lists are read from each release's man pages; the data file says how.

The same file classes the parameters a daemon running as root would run, load, write or send away (`restricted`):
a blueprint may set them only where the policy config allows the key and the value (policies/root_access.py).
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


Reason = Literal["program", "file", "directory", "plugin", "endpoint", "credential", "isolation"]
Key = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]


class _Keys(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slurm_conf: dict[Key, Reason]
    cgroup_conf: dict[Key, Reason]


class _Restricted(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reasons: dict[Reason, str]
    suffixes: dict[Key, Reason]
    exceptions: dict[Key, str]
    keys: _Keys
    safe_options: dict[Key, list[Key]]
    safe: dict[Key, list[str]]


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    apiVersion: Literal["clusterforge/v1"]
    kind: Literal["SlurmParameters"]
    restricted: _Restricted
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


@dataclass(frozen=True)
class Restricted:
    """Which pass-through parameters need the policy config's allowance, and why (the data file's `restricted`)."""

    reasons: dict[str, str]  # reason -> what it means
    suffixes: tuple[tuple[str, str], ...]  # lowercased name ending -> reason, longest first
    exceptions: dict[str, str]  # lowercased name -> why it is safe
    keys: dict[str, dict[str, str]]  # "slurm_conf" | "cgroup_conf" -> lowercased name -> reason
    safe_options: dict[str, frozenset[str]]  # lowercased name -> lowercased option names that need no allowance
    safe: dict[str, frozenset[str]]  # lowercased name -> lowercased values that need no allowance

    def why(self, file: Literal["slurm_conf", "cgroup_conf"], key: str, value: str) -> str | None:
        """What a root daemon would do with `key=value` (the reason's words), or None when it needs no allowance."""
        folded = key.lower()
        reason = self.keys[file].get(folded)
        if reason is None and folded not in self.exceptions:
            reason = next((why for end, why in self.suffixes if folded.endswith(end)), None)
        if reason is None or value.lower() in self.safe.get(folded, frozenset()):
            return None
        options = self.safe_options.get(folded)
        if options is not None and all(item.split("=", 1)[0].lower() in options for item in value.split(",")):
            return None
        return self.reasons[reason]


def _data() -> _File:
    text = (resources.files("clusterforge.catalog") / "data" / DATA).read_text(encoding="utf-8")
    return _File.model_validate(yaml.safe_load(text))


@lru_cache(maxsize=1)
def restricted() -> Restricted:
    """The restricted class of parameters, read once."""
    data = _data().restricted
    return Restricted(
        {reason: words for reason, words in data.reasons.items()},
        tuple(sorted(((end.lower(), why) for end, why in data.suffixes.items()), key=lambda p: -len(p[0]))),
        {key.lower(): why for key, why in data.exceptions.items()},
        {file: {key.lower(): why for key, why in getattr(data.keys, file).items()} for file in ("slurm_conf",
                                                                                                 "cgroup_conf")},
        {key.lower(): frozenset(o.lower() for o in options) for key, options in data.safe_options.items()},
        {key.lower(): frozenset(v.lower() for v in values) for key, values in data.safe.items()})


@lru_cache(maxsize=1)
def releases() -> dict[str, ReleaseParameters]:
    """Every release with a parameter list, by major.minor ("24.11")."""
    data = _data()
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
