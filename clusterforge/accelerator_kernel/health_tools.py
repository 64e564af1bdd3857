"""What a vendor's tools put into `clusterforge health` and `report --measured`: how the all-reduce view names the
vendor's collective library, the lines its collective test prints when a rank fails, and its own words for the next
steps that use its tools (its clock and power commands, its node diagnostic).

A vendor declares them as `HEALTH_TOOLS` in its `health_tools.py` (clusterforge/accelerators/<vendor>/); one without
it gets the neutral words, so the operations layer names no vendor. The commands speak for the default vendor's
nodes; a failure marker of any registered vendor counts, since srun's output shows which test ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterforge.accelerator_kernel import Accelerator, default, registered, vendor_value


@dataclass(frozen=True, eq=False)
class HealthTools:
    """- `collectives`: the collective library, as the all-reduce view titles its run ("NCCL all-reduce across ...").
    - `failure_markers`: literal text its collective test prints when a rank fails (a run that printed one failed).
    - `next_steps`: its words for (command, verdict) steps of operations/next_steps.py that use its own tools."""

    collectives: str = "Collective"
    failure_markers: tuple[str, ...] = ()
    next_steps: Mapping[tuple[str, str], str] = field(default_factory=dict)


NEUTRAL = HealthTools()


def health_tools(vendor: Accelerator | None = None) -> HealthTools:
    """The vendor's tools (None: the default vendor's), or the neutral words where it declares none."""
    return vendor_value(vendor or default(), "health_tools", "HEALTH_TOOLS", HealthTools) or NEUTRAL


def failure_markers() -> tuple[str, ...]:
    """Every registered vendor's failure markers, each once."""
    return tuple(dict.fromkeys(marker for vendor in registered().values()
                               for marker in health_tools(vendor).failure_markers))
