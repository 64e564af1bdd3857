"""Policy configuration: typed thresholds with sourced defaults, overridable per rule from a YAML file."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

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


class PolicyConfig(Assumptions):
    """The whole policy configuration file (`--policy-config`): the physical assumptions and per-rule settings."""

    apiVersion: Literal["clusterforge/v1"] = "clusterforge/v1"
    kind: Literal["PolicyConfig"] = "PolicyConfig"
    rules: dict[RuleId, dict[str, Any]] = {}
