"""The estimate: every line of the cluster as analysed, and the totals a budget is held to."""

from __future__ import annotations

from collections.abc import Mapping

from clusterforge.catalog import Catalog
from clusterforge.cost.cloud import instance_lines, storage_lines
from clusterforge.cost.model import CostEstimate, CostLine
from clusterforge.cost.onprem import fabric_lines, facility_lines, power_line, server_lines
from clusterforge.cost.power_saving import DEFAULT_IDLE_SHARE, power_saved_lines
from clusterforge.cost.ratios import per_gpu_hour
from clusterforge.model import Cluster
from clusterforge.plan.model import Plan
from clusterforge.target_kernel import blueprint_part, target_of


def pool_gpus(cluster: Cluster, catalog: Catalog) -> dict[str, int]:
    """Each pool's GPUs (devices × GPUs per device), a power-saved pool's at its ceiling as its cost is."""
    return {pool.name: pool.ceiling * getattr(catalog.get(pool.hardware), "gpu_count", 0) for pool in cluster.pools}


def gpu_count(cluster: Cluster, catalog: Catalog) -> int:
    """GPUs of every pool, priced or not."""
    return sum(pool_gpus(cluster, catalog).values())


def totals(lines: tuple[CostLine, ...], gpus: Mapping[str, int], amortise_years: float,
           savings: tuple[CostLine, ...] = (), idle_share: float | None = None) -> CostEstimate:
    """monthly = Σ monthly lines + Σ one-off lines / (12 × amortise_years); $/GPU-hour = monthly / (priced GPUs ×
    730), by the one rule for a ratio over items some of which have no price (cost/ratios.py). Only priced lines
    add up; the unpriced ones are named in `unpriced` (each total is then a floor). The savings ride along
    untouched: none of them enters a total. `gpus`: each pool's GPUs."""
    counted = [line for line in lines if line.priced]
    capex = sum(line.total_usd for line in counted if line.period == "once")
    monthly = sum(line.total_usd for line in counted if line.period == "month") + capex / (12 * amortise_years)
    ratio = per_gpu_hour(monthly, gpus, lines)
    return CostEstimate("USD", monthly, capex, ratio.usd, ratio.gpus, lines, savings, idle_share,
                        tuple(line.unpriced for line in lines if not line.priced), ratio)


def estimate_cost(cluster: Cluster, plan: Plan, catalog: Catalog, idle_share: float | None = None) -> CostEstimate:
    """What `cluster` costs with `catalog`'s prices, as the target builds it: on AWS with the controller the stack
    adds when the blueprint has none (a no-op for `Analysis.cluster`, which has it), so `cost` and the COST rules,
    which see the blueprint as written, price the same pools.

    `idle_share` (0 to 1; None: DEFAULT_IDLE_SHARE) is the part of the month a power-saved on-prem pool's nodes
    above `count` are powered down: it sizes the savings only, never a total (the budget's worst case)."""
    with_controller = blueprint_part(target_of(cluster)).with_controller
    if with_controller is not None:
        cluster, _ = with_controller(cluster, None)
    lines = (*instance_lines(cluster, catalog), *storage_lines(cluster, catalog), *server_lines(cluster, catalog),
             *fabric_lines(plan, catalog), *facility_lines(cluster, plan, catalog),
             *power_line(cluster, plan, catalog))
    savings = tuple(power_saved_lines(cluster, catalog, idle_share))
    share = DEFAULT_IDLE_SHARE if idle_share is None else idle_share
    return totals(tuple(lines), pool_gpus(cluster, catalog), cluster.cost.amortise_years, savings,
                  share if savings else None)
