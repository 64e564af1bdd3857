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


Share = Annotated[float, Field(gt=0, lt=1)]


class PerfTolerances(BaseModel):
    """How far below its fleet or its datasheet a GPU may measure before `clusterforge health perf` names it slow.

    The fleet tolerance catches the one GPU in thousands that lags its peers (a synchronous job runs at its pace);
    the floors, fractions of the catalog's datasheet peaks, catch a fleet that is slow as a whole, so they sit well
    below what healthy GPUs reach: an H100 SXM measures about 80 % of its dense BF16 peak and 90 % of its memory
    bandwidth (793 of 989 TFLOP/s, 3.03 of 3.35 TB/s on a lent H100 80GB HBM3), and public GEMM benchmarks of
    MI300X report about half of its 1,307 TFLOP/s [U]."""

    model_config = FINITE

    fleet_tolerance: Share = Field(0.10, description=(
        "a GPU is slow below its model's fleet median × (1 − this); healthy GPUs spread about ±3 %"))
    gemm_floor: Share = Field(0.50, description="a GPU is slow below this fraction of its model's dense BF16 peak")
    hbm_floor: Share = Field(0.60, description="a GPU is slow below this fraction of its model's memory bandwidth")
    allreduce_floor: Share = Field(0.70, description=(
        "`health allreduce` fails below this fraction of the nodes' fabric line rate (with --blueprint): a healthy "
        "ring all-reduce reaches about 80-90 % of the NICs' rate"))


class HealthSettings(BaseModel):
    """The health commands' thresholds (`health:` in the policy config)."""

    model_config = FINITE

    perf: PerfTolerances = PerfTolerances()


class PolicyConfig(Assumptions):
    """The whole policy configuration file (`--policy-config`): the physical assumptions, what blueprints may
    hand to root (`slurm:`, `storage:`), the health commands' thresholds (`health:`) and per-rule settings."""

    apiVersion: Literal["clusterforge/v1"] = "clusterforge/v1"
    kind: Literal["PolicyConfig"] = "PolicyConfig"
    slurm: SlurmAllowances = SlurmAllowances()
    storage: StorageAllowances = StorageAllowances()
    health: HealthSettings = HealthSettings()
    rules: dict[RuleId, dict[str, Any]] = {}
