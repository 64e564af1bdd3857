"""What an on-prem pool may say beyond every pool's fields: whether its servers' BMCs answer Redfish, which lets
SLURM power its idle servers off and on again (`max_count`, through clusterforge's power-save programs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

BMC_NEEDED = ("give the pool `bmc: redfish` (its servers' BMCs answer Redfish) and each node's BMC in the BMC "
              "document the slurm role installs (docs/bare-metal.md, \"Idle servers powered off\")")


class OnpremPool(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    bmc: Literal["redfish"] | None = Field(None, description=(
        "how clusterforge reaches the pool's servers' BMCs: `redfish` lets SLURM power idle servers off and on "
        "again (max_count); where each BMC answers is the BMC document, never the blueprint"))


def has_bmcs(cluster: Any, pool: Any) -> bool:
    """The pool's servers have BMCs clusterforge's provider can power them with."""
    return getattr(pool, "bmc", None) == "redfish"
