"""What a cluster costs: a view over the plan and the catalog's prices (data with sources and dates), computed
here once so that `cost`, `check`'s budget rule, `diff` and the report show the same figures."""

from clusterforge.cost.estimate import estimate_cost
from clusterforge.cost.model import HOURS_PER_MONTH, CostEstimate, CostLine, PerGpuHour

__all__ = ["HOURS_PER_MONTH", "CostEstimate", "CostLine", "PerGpuHour", "estimate_cost"]
