"""Policy configuration: typed thresholds with sourced defaults, overridable per rule from a YAML file."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from clusterforge.core.text import MountPath, SlurmKey, SlurmValue
from clusterforge.physics.assumptions import FINITE, Assumptions

Level = Literal["error", "warning", "info"]
LEVEL_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
# Rule ids are checked against the registry (with a "did you mean"); here only their length is bounded.
RuleId = Annotated[str, StringConstraints(max_length=16), Field(description="a rule id, e.g. CLG-005")]


class Settings(BaseModel):
    """Base of every rule's settings: `level` overrides the rule's default, `enabled: false` skips it."""

    model_config = FINITE

    level: Level | None = None
    enabled: bool = True


# Each allowed key with the exact values a blueprint may give it (SLURM compares keys ignoring case).
Allowed = Annotated[dict[SlurmKey, Annotated[list[SlurmValue], Field(min_length=1, max_length=100)]],
                    Field(max_length=200)]


class SlurmAllowances(BaseModel):
    """Restricted `slurm.settings` / `slurm.cgroup_settings` (a program, file, plugin, endpoint or a switch of
    job isolation: policies/root_access.py) the platform team allows, key and value, e.g.
    `allowed_settings: {HealthCheckProgram: [/usr/local/sbin/nhc]}`. A blueprint cannot allow them itself."""

    model_config = FINITE

    allowed_settings: Allowed = {}
    allowed_cgroup_settings: Allowed = {}


class StorageAllowances(BaseModel):
    """Folders, besides policies/root_access.py's defaults, under which mount points, slurmctld's state and
    job_container/tmpfs folders may be, e.g. `mount_prefixes: [/gpfs]`."""

    model_config = FINITE

    mount_prefixes: Annotated[list[MountPath], Field(max_length=100)] = []


class PolicyConfig(Assumptions):
    """The whole policy configuration file (`--policy-config`): the physical assumptions, what blueprints may
    hand to root (`slurm:`, `storage:`) and per-rule settings."""

    apiVersion: Literal["clusterforge/v1"] = "clusterforge/v1"
    kind: Literal["PolicyConfig"] = "PolicyConfig"
    slurm: SlurmAllowances = SlurmAllowances()
    storage: StorageAllowances = StorageAllowances()
    rules: dict[RuleId, dict[str, Any]] = {}
