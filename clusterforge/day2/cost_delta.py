"""What changing a cluster from one blueprint to another does to its cost: the two estimates `clusterforge cost`
makes (clusterforge.cost, the same lines and prices) and the difference, for `diff`. A side read from a render
directory has no plan and so no estimate: then nothing is compared."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clusterforge.cost import CostEstimate
    from clusterforge.day2.rendered import Rendered
    from clusterforge.formats.cost_diff import CostDiff
    from clusterforge.pipeline.analysis import PolicyInputs


@dataclass(frozen=True)
class CostDelta:
    """The estimates of OLD and NEW; the deltas are NEW minus OLD."""

    old: CostEstimate
    new: CostEstimate

    @property
    def delta_monthly_usd(self) -> float:
        return self.new.monthly_usd - self.old.monthly_usd

    @property
    def delta_capex_usd(self) -> float:
        return self.new.capex_usd - self.old.capex_usd

    def to_dict(self) -> dict[str, object]:
        return {"currency": self.new.currency,
                "old_monthly_usd": self.old.monthly_usd, "new_monthly_usd": self.new.monthly_usd,
                "delta_monthly_usd": self.delta_monthly_usd,
                "old_capex_usd": self.old.capex_usd, "new_capex_usd": self.new.capex_usd,
                "delta_capex_usd": self.delta_capex_usd,
                "old_usd_per_gpu_hour": self.old.usd_per_gpu_hour,
                "new_usd_per_gpu_hour": self.new.usd_per_gpu_hour}

    def view(self, old_name: str, new_name: str) -> CostDiff:
        """Item by item, for the pull-request comment (formats.cost_diff)."""
        from clusterforge.formats.cost_diff import CostDiff

        return CostDiff(old_name, new_name, self.old, self.new)

    def line(self) -> str:
        """`cost: $A/month -> $B/month (+$C, +P%); capex $D -> $E`, whole dollars: an estimate, not an invoice."""
        old, new, delta = self.old.monthly_usd, self.new.monthly_usd, self.delta_monthly_usd
        change = f"{_signed(delta)}, {_percent(delta, old)}" if old else _signed(delta)
        text = (f"cost: {_usd(old)}/month -> {_usd(new)}/month ({change}); "
                f"capex {_usd(self.old.capex_usd)} -> {_usd(self.new.capex_usd)}")
        if self.old.usd_per_gpu_hour is not None and self.new.usd_per_gpu_hour is not None:
            text += f"; per GPU-hour ${self.old.usd_per_gpu_hour:,.2f} -> ${self.new.usd_per_gpu_hour:,.2f}"
        return text


def _usd(value: float) -> str:
    return f"{'-' if round(value) < 0 else ''}${abs(value):,.0f}"


def _signed(value: float) -> str:
    return f"{'-' if round(value) < 0 else '+'}${abs(value):,.0f}"


def _percent(delta: float, old: float) -> str:
    share = delta / old * 100
    return f"{'-' if round(share) < 0 else '+'}{abs(share):.0f}%"


def rendered_with_cost(blueprint: Path, inputs: PolicyInputs) -> tuple[Rendered, CostEstimate]:
    """Blueprint `blueprint` rendered in memory (as `Rendered.from_blueprint`) and its cost estimate, from one
    analysis: the estimate prices the cluster as its target builds it, with the catalog `inputs` name."""
    from clusterforge.cost import estimate_cost
    from clusterforge.day2.rendered import Rendered
    from clusterforge.pipeline import analysis
    from clusterforge.render import RenderContext
    from clusterforge.target_kernel import project_dir

    result = analysis.analyze(blueprint, analysis.read_policy(inputs))
    rendered = Rendered.from_context(RenderContext(result.loaded, result.plan, project_dir(result.loaded.cluster)))
    return rendered, estimate_cost(result.cluster, result.plan, result.policy.catalog)


def estimated(argument: str, inputs: PolicyInputs, idle_share: float | None = None) -> CostEstimate:
    """The estimate of blueprint ARGUMENT, a file or REV:PATH (read from git as `diff` reads it), without a
    render: `cost --diff` prices both sides and compares nothing else."""
    from clusterforge.cost import estimate_cost
    from clusterforge.day2 import revisions
    from clusterforge.pipeline import analysis

    policy = analysis.read_policy(inputs)
    with revisions.blueprint_path(argument) as path:
        result = analysis.analyze(path, policy)
        return estimate_cost(result.cluster, result.plan, policy.catalog, idle_share)


def cost_delta(old: CostEstimate | None, new: CostEstimate | None) -> CostDelta | None:
    """The delta when both sides were estimated (both came from a blueprint), else None."""
    return CostDelta(old, new) if old is not None and new is not None else None
