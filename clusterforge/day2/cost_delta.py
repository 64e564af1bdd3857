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
    def complete(self) -> bool:
        """The deltas are exact: both estimates price every item, or leave out the same items (named with their
        counts, so they cost the same on both sides)."""
        return sorted(self.old.unpriced) == sorted(self.new.unpriced)

    @property
    def delta_monthly_usd(self) -> float | None:
        """NEW minus OLD; None where a side has an item without a price (the difference is not known)."""
        return self.new.monthly_usd - self.old.monthly_usd if self.complete else None

    @property
    def delta_capex_usd(self) -> float | None:
        return self.new.capex_usd - self.old.capex_usd if self.complete else None

    def to_dict(self) -> dict[str, object]:
        """The totals of both sides and the deltas (null, never a figure that counts an item without a price as $0,
        where the sides leave out different items: `unpriced` names them per side)."""
        return {"currency": self.new.currency,
                "old_monthly_usd": self.old.monthly_usd, "new_monthly_usd": self.new.monthly_usd,
                "delta_monthly_usd": self.delta_monthly_usd,
                "old_capex_usd": self.old.capex_usd, "new_capex_usd": self.new.capex_usd,
                "delta_capex_usd": self.delta_capex_usd,
                "old_usd_per_gpu_hour": self.old.usd_per_gpu_hour,
                "new_usd_per_gpu_hour": self.new.usd_per_gpu_hour,
                "unpriced": {"old": list(self.old.unpriced), "new": list(self.new.unpriced)}}

    def view(self, old_name: str, new_name: str) -> CostDiff:
        """Item by item, for the pull-request comment (formats.cost_diff)."""
        from clusterforge.formats.cost_diff import CostDiff

        return CostDiff(old_name, new_name, self.old, self.new)

    def line(self) -> str:
        """`cost: $A/month -> $B/month (+$C, +P%); capex $D -> $E`, whole dollars: an estimate, not an invoice. A
        side with an item the catalog has no price for is `at least` its total, the difference is unknown, and the
        items are named (`not priced after: ...`), unless both sides leave out the same items."""
        old, new, delta = self.old.monthly_usd, self.new.monthly_usd, self.delta_monthly_usd
        floor = {side: "" if self.complete or estimate.complete else "at least "
                 for side, estimate in (("old", self.old), ("new", self.new))}
        if delta is None:
            change = "difference unknown"
        else:
            change = f"{_signed(delta)}, {_percent(delta, old)}" if old else _signed(delta)
        text = (f"cost: {floor['old']}{_usd(old)}/month -> {floor['new']}{_usd(new)}/month ({change}); "
                f"capex {floor['old']}{_usd(self.old.capex_usd)} -> {floor['new']}{_usd(self.new.capex_usd)}")
        if self.old.usd_per_gpu_hour is not None and self.new.usd_per_gpu_hour is not None:
            text += (f"; per GPU-hour {floor['old']}${self.old.usd_per_gpu_hour:,.2f} -> "
                     f"{floor['new']}${self.new.usd_per_gpu_hour:,.2f}")
        for side, estimate in (("before", self.old), ("after", self.new)):
            if not self.complete and not estimate.complete:
                text += f"; not priced {side}: {', '.join(estimate.unpriced)}"
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
