"""Cost rules: the estimate (clusterforge/cost, the same figures `clusterforge cost` prints) within the
blueprint's `budget:`."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.cost import HOURS_PER_MONTH, CostEstimate, estimate_cost
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("cost", "Cost", 90)

PRICED = ("pools[].{hardware,count,max_count,purchase}", "cost.{purchase,amortise_years}",
          "storage.lustre.{capacity_gib,deployment_type,storage_type,throughput_mb_s_per_tib}",
          "site.{pue,energy_usd_per_kwh}", "fabric.switch")
SOURCE = "the blueprint's budget; prices from the catalog (clusterforge/catalog/data/prices.yaml or --catalog)"


def _estimate(ctx: Context) -> CostEstimate:
    return estimate_cost(ctx.cluster, ctx.plan, ctx.catalog)


def _usd(value: float) -> str:
    return f"${value:,.2f}"


@rule("COST-001", "error", DOMAIN, "Within budget", SOURCE,
      inputs=Inputs(("budget.{monthly_usd,capex_usd,usd_per_gpu_hour}", *PRICED), ("max_power_kw",)))
def within_budget(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The estimate's monthly cost, one-off purchase and cost per GPU-hour are each at most the budget given."""
    budget = ctx.cluster.budget
    if budget is None:
        return
    estimate = _estimate(ctx)
    hint = "reduce the design, change `cost.purchase`, or raise the budget (`clusterforge cost` lists every line)"
    years = ctx.cluster.cost.amortise_years
    if budget.monthly_usd is not None and estimate.monthly_usd > budget.monthly_usd:
        recurring = estimate.monthly_usd - estimate.capex_usd / (12 * years)
        how = (f"{_usd(recurring)} recurring + {_usd(estimate.capex_usd)} / (12 x {years:g} years)"
               if estimate.capex_usd else "the sum of the monthly lines")
        yield Draft(("budget", "monthly_usd"),
                    f"the estimate is {_usd(estimate.monthly_usd)}/month ({how}), over the budget of "
                    f"{_usd(budget.monthly_usd)}/month by {_usd(estimate.monthly_usd - budget.monthly_usd)}",
                    hint, estimate.monthly_usd, budget.monthly_usd, "USD/month")
    if budget.capex_usd is not None and estimate.capex_usd > budget.capex_usd:
        yield Draft(("budget", "capex_usd"),
                    f"the one-off purchase is {_usd(estimate.capex_usd)}, over the budget of "
                    f"{_usd(budget.capex_usd)} by {_usd(estimate.capex_usd - budget.capex_usd)}",
                    hint, estimate.capex_usd, budget.capex_usd, "USD")
    per_gpu = estimate.usd_per_gpu_hour
    if budget.usd_per_gpu_hour is not None and per_gpu is not None and per_gpu > budget.usd_per_gpu_hour:
        yield Draft(("budget", "usd_per_gpu_hour"),
                    f"{_usd(estimate.monthly_usd)}/month / ({estimate.gpus:,} GPUs x {HOURS_PER_MONTH} h) = "
                    f"${per_gpu:,.4f} per GPU-hour, over the budget of ${budget.usd_per_gpu_hour:,.4f}",
                    hint, per_gpu, budget.usd_per_gpu_hour, "USD/GPU-hour")


@rule("COST-002", "error", DOMAIN, "Budget verifiable: every item priced", SOURCE,
      inputs=Inputs(("budget.{monthly_usd,capex_usd,usd_per_gpu_hour}", *PRICED)))
def fully_priced(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Where a budget is set, every item of the estimate has a price in the catalog. An item without one is in no
    total, so each total is only a floor: an estimate under the budget proves nothing, and a budget that cannot
    be verified never passes (waive this with the reason where the items are paid for elsewhere)."""
    if ctx.cluster.budget is None:
        return
    estimate = _estimate(ctx)
    if estimate.unpriced:
        names = "; ".join(estimate.unpriced)
        yield Draft(("budget",), f"the budget cannot be verified: {len(estimate.unpriced)} item(s) have no price, "
                                 f"so the estimate ({_usd(estimate.monthly_usd)}/month, {_usd(estimate.capex_usd)} "
                                 f"capex) leaves them out and is only a floor: {names}",
                    "add their prices under `prices:` in a --catalog file (docs/cost.md), or waive COST-002 with "
                    "the reason they need none", len(estimate.unpriced), 0, "items")


@rule("COST-003", "warning", DOMAIN, "Every server priced", SOURCE,
      inputs=Inputs(("pools[].{hardware,count,max_count,purchase}", "cost.purchase")))
def servers_priced(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every pool's server or instance type has a price (for its purchase option and region). One without is left
    out of every total, so the monthly cost and cost per GPU-hour `cost` prints would count those servers as
    free (a DGX B200 unit at its power and fabric alone): said here, budget or not."""
    missing = {line.pool: line for line in _estimate(ctx).lines if line.pool and not line.priced}
    for index, pool in enumerate(ctx.cluster.pools):
        line = missing.get(pool.name)
        if line is not None:
            yield Draft(("pools", index, "hardware"),
                        f"{line.unpriced}: {line.source.split(':')[0]}, so every cost total leaves it "
                        "out and the monthly cost and cost per GPU-hour understate the cluster",
                        "add the price under `prices:` in a --catalog file (a quote, docs/cost.md)", line.quantity,
                        None, line.unit)
