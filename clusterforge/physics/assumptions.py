"""The physical assumptions a design is judged under: derating, power factor and default cooling capacities."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Fraction = Annotated[float, Field(gt=0, le=1)]
# Every model here is finite: a NaN threshold compares false and would silently switch a check off.
FINITE = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Electrical(BaseModel):
    """Shared by PWR-001/002/006 and the planner, so capacity is computed one way everywhere."""

    model_config = FINITE

    derate: Fraction = Field(0.8, description="NEC 210.19/210.20 continuous-load rule: load ≤ 80 % of breaker")
    power_factor: Fraction = Field(1.0, description="PF between kVA and kW; 1.0 as NetBox computes available power")


class Cooling(BaseModel):
    """Default rack cooling capacities when a rack does not state its own (aidatacenterguide ch. 5.3)."""

    model_config = FINITE

    air_kw: float = Field(30.0, gt=0, description="conventional air-cooled rack ceiling")
    containment_kw: float = Field(40.0, gt=0, description="hot/cold aisle containment ceiling (~41 kW practical max)")
    liquid_rack_air_kw: float = Field(30.0, gt=0, description="air capacity of a liquid rack that states none")

    def air_capacity_kw(self, kind: str, stated: float | None) -> float:
        """The rack's air capacity: what it states, else the default of its kind."""
        if stated is not None:
            return stated
        return {"air": self.air_kw, "containment": self.containment_kw}.get(kind, self.liquid_rack_air_kw)


class Assumptions(BaseModel):
    """What the planner and the rules both assume; a policy config's `electrical:` and `cooling:` sections."""

    model_config = FINITE

    electrical: Electrical = Electrical()
    cooling: Cooling = Cooling()
