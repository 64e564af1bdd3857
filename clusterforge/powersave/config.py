"""The power-save file render writes for the controller: which provider powers which nodes, and with what.

One group per pool, the grain of what IaC owns (a cloud pool's launch template), so the file is O(pools) like the
state: a group names its nodes as one hostlist, and its `launch` data in its provider's own words (a cloud's launch
template and capacity, nothing for servers powered through their BMCs), which the provider checks. The programs read
it on every call (slurmctld starts them fresh), so it is small and checked on load: a broken file is exit 2 with its
location, never a half-launched fleet.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from clusterforge.core import hostlist
from clusterforge.core.errors import ClusterforgeError, Problem

Scaling = Literal["all-or-nothing", "best-effort"]
LaunchKey = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
LaunchValue = Annotated[str, StringConstraints(max_length=256)]

# The provider: the name of the target whose nodes these are (a package under clusterforge.targets); the programs
# make that package's `powersave.PROVIDER`. A name, never a module or class: the file cannot choose code to run.
PROVIDER = r"^[a-z][a-z0-9_]{0,39}$"
ProviderPath = Annotated[str, StringConstraints(pattern=PROVIDER), Field(description=(
    "the target whose provider starts and stops these nodes: a package under clusterforge.targets"))]

# ParallelCluster's node plugin: launch_max_batch_size 500, insufficient_capacity_timeout 600 s (scale.md)
DEFAULT_BATCH = 500
FLEET_MAX = 10_000  # EC2 Fleet's target capacity per fleet


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NodeGroup(_Strict):
    """Nodes one provider powers alike: what every provider has, and its own launch data."""

    name: str = Field(min_length=1, max_length=128)
    nodes: str = Field(min_length=1, description="hostlist, e.g. gpu-[0001-0016]")
    static: str = Field("", description="the always-on part of `nodes` (pools[].count), powered up by reconcile")
    scaling: Scaling = "all-or-nothing"
    launch: dict[LaunchKey, LaunchValue] = Field(default_factory=dict, max_length=16, description=(
        "what the provider launches these nodes with, in its own words, checked by the provider (none for servers "
        "powered through their BMCs)"))
    provider: ProviderPath | None = Field(None, description=(
        "the target whose provider starts and stops this group's nodes, where it is not the file's (a hybrid's "
        "on-prem pool powered through its BMCs beside a cloud pool)"))

    @cached_property
    def members(self) -> frozenset[str]:
        return frozenset(hostlist.expand(self.nodes))

    @cached_property
    def static_members(self) -> frozenset[str]:
        return frozenset(hostlist.expand(self.static)) if self.static else frozenset()


DebianPackage = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.+-]{1,63}$")]
ControllerFile = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]


class PowerSaveConfig(_Strict):
    cluster: str = Field(min_length=1, max_length=64)
    provider: ProviderPath
    controller_packages: tuple[DebianPackage, ...] = Field((), max_length=32, description=(
        "the Debian packages the provider needs on a controller whose programs run on /usr/bin/python3 (its "
        "OS_PACKAGES): the slurm role installs them, and names no target"))
    controller_files: tuple[ControllerFile, ...] = Field((), max_length=8, description=(
        "the files beside this one the provider reads on the controller (its CONTROLLER_FILES): the slurm role "
        "refuses to install power saving without a source for each"))
    region: str = ""
    batch_size: int = Field(DEFAULT_BATCH, ge=1, le=FLEET_MAX)
    insufficient_capacity_timeout_s: int = Field(600, ge=0)
    groups: tuple[NodeGroup, ...]

    def group_of(self, node: str) -> NodeGroup | None:
        return next((g for g in self.groups if node in g.members), None)

    def provider_of(self, group: NodeGroup) -> str:
        """The target whose provider powers the group's nodes: its own, else the file's."""
        return group.provider or self.provider

    @property
    def providers(self) -> tuple[str, ...]:
        """Every provider the groups name, the file's first."""
        return tuple(dict.fromkeys([self.provider, *(self.provider_of(g) for g in self.groups)]))

    def of_provider(self, provider: str) -> PowerSaveConfig:
        """This file as one provider sees it: its groups alone, under its name."""
        return self.model_copy(update={"provider": provider,
                                       "groups": tuple(g for g in self.groups if self.provider_of(g) == provider)})


def load(path: Path) -> PowerSaveConfig:
    """The file at `path`, checked: exit 2 with its location when it is missing or wrong."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        config = PowerSaveConfig.model_validate(raw)
        for index, group in enumerate(config.groups):
            for name in ("nodes", "static"):
                try:  # a bad hostlist fails here, not mid-launch
                    _ = group.members if name == "nodes" else group.static_members
                except ClusterforgeError as exc:
                    raise ClusterforgeError(Problem(exc.problems[0].message, str(path),
                                                    path=f"groups.{index}.{name}")) from exc
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read the power-save file: {exc.strerror}", str(path))) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ClusterforgeError(Problem(first["msg"], str(path), path=where)) from exc
    except ValueError as exc:
        raise ClusterforgeError(Problem(f"not JSON: {exc}", str(path))) from exc
    return config
