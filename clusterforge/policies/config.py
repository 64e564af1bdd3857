"""Policy configuration: typed thresholds with sourced defaults, overridable per rule from a YAML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from clusterforge.errors import ClusterforgeError
from clusterforge.validation import validate
from clusterforge.yamlsource import load_file

Level = Literal["error", "warning", "info"]
LEVEL_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
Fraction = Annotated[float, Field(gt=0, le=1)]
# Rule ids are checked against the registry (with a "did you mean"); here only their length is bounded.
RuleId = Annotated[str, StringConstraints(max_length=16), Field(description="a rule id, e.g. CLG-005")]
# Every model here is finite: a NaN threshold compares false and would silently switch its rule off.
_CONFIG = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Settings(BaseModel):
    """Base of every rule's settings: `level` overrides the rule's default, `enabled: false` skips it."""

    model_config = _CONFIG

    level: Level | None = None
    enabled: bool = True


class Electrical(BaseModel):
    """Shared by PWR-001/002/006 and the planner, so capacity is computed one way everywhere."""

    model_config = _CONFIG

    derate: Fraction = Field(0.8, description="NEC 210.19/210.20 continuous-load rule: load ≤ 80 % of breaker")
    power_factor: Fraction = Field(1.0, description="PF between kVA and kW; 1.0 as NetBox computes available power")


class Cooling(BaseModel):
    """Default rack cooling capacities when a rack does not state its own (aidatacenterguide ch. 5.3)."""

    model_config = _CONFIG

    air_kw: float = Field(30.0, gt=0, description="conventional air-cooled rack ceiling")
    containment_kw: float = Field(40.0, gt=0, description="hot/cold aisle containment ceiling (~41 kW practical max)")
    liquid_rack_air_kw: float = Field(30.0, gt=0, description="air capacity of a liquid rack that states none")

    def air_capacity_kw(self, kind: str, stated: float | None) -> float:
        """The rack's air capacity: what it states, else the default of its kind."""
        if stated is not None:
            return stated
        return {"air": self.air_kw, "containment": self.containment_kw}.get(kind, self.liquid_rack_air_kw)


class PolicyConfig(BaseModel):
    """The whole policy configuration file (`--policy-config`)."""

    model_config = _CONFIG

    apiVersion: Literal["clusterforge/v1"] = "clusterforge/v1"
    kind: Literal["PolicyConfig"] = "PolicyConfig"
    electrical: Electrical = Electrical()
    cooling: Cooling = Cooling()
    rules: dict[RuleId, dict[str, Any]] = {}


def load_policy_config(path: Path | None) -> PolicyConfig:
    """Read a policy config file; rule sections are validated against each rule's settings by the registry."""
    if path is None:
        return PolicyConfig()
    source = load_file(path)
    config = validate(PolicyConfig, source)
    from clusterforge.policies.registry import REGISTRY, settings_problems

    problems = settings_problems(config, source, REGISTRY)
    if problems:
        raise ClusterforgeError(problems)
    return config
