"""What an on-prem pool may say beyond every pool's fields: which protocol its servers' BMCs answer (Redfish or IPMI),
which lets SLURM power its idle servers off and on again (`max_count`, through clusterforge's power-save
programs)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from clusterforge.bmc.protocols import PROTOCOLS


def _spoken(name: str) -> str:
    if name not in PROTOCOLS:
        raise ValueError(f"clusterforge speaks no BMC protocol {name!r}: one of {', '.join(sorted(PROTOCOLS))}")
    return name


# one of the protocols clusterforge.bmc.protocols registers (a new one is a choice here with no edit)
BmcProtocolName = Annotated[str, AfterValidator(_spoken), WithJsonSchema({"type": "string", "enum": sorted(PROTOCOLS)})]

BMC_NEEDED = ("give the pool `bmc: redfish` or `bmc: ipmi` (the protocol its servers' BMCs answer) and each node's "
              "BMC in the BMC "
              "document the slurm role installs (docs/bare-metal.md, \"Idle servers powered off\")")


class OnpremPool(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    bmc: BmcProtocolName | None = Field(None, description=(
        "the protocol the pool's servers' BMCs answer (`redfish`, `ipmi`): it lets SLURM power idle servers off and "
        "on again (max_count); where each BMC answers, and the protocol each speaks, is the BMC document, never the "
        "blueprint"))


def has_bmcs(cluster: Any, pool: Any) -> bool:
    """The pool's servers have BMCs clusterforge's provider can power them with."""
    return getattr(pool, "bmc", None) is not None
