"""Ratios over the design (the cost per GPU-hour) when some items have no price: one rule, here, for every view.

The rule: a ratio divides what is priced by what the priced items hold. A pool whose own line (its servers or
instances) has no price is left out of the divisor with its GPUs, and named ("over the 128 priced GPUs (128 GPUs
of pool burst unpriced)"): dividing the priced cost by GPUs whose cost is not in it would understate the figure by
their share. The lines pools share (fabric, racks, power, storage) stay whole in the dividend: leaving out a pool
that shares them (an on-prem pool) makes the figure lean high, never low. Where no GPU is priced the figure is
withheld, with the reason. Any other item without a price (a controller, a switch, power without a tariff) is in
neither: the figure then says it excludes it, as the totals do (a floor under the cost of the priced GPUs).

`cost`, its Markdown, `cost --diff`, the report's cost panel and the budget rule all read the one figure this
module makes (`CostEstimate.per_gpu_hour`); no view divides on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from clusterforge.cost.model import HOURS_PER_MONTH, CostLine, PerGpuHour


def per_gpu_hour(monthly_usd: float, pool_gpus: Mapping[str, int], lines: Iterable[CostLine]) -> PerGpuHour:
    """`monthly_usd` (the priced lines' monthly total) / (priced GPUs × 730 h): the GPUs of a pool whose own line
    has no price are left out of the divisor and named; with no priced GPU left the figure is withheld. Unpriced
    lines of no such pool are counted in `excluded` (the figure leaves their cost out)."""
    unpriced = [line for line in lines if not line.priced]
    dark = {line.pool for line in unpriced if line.pool and pool_gpus.get(line.pool, 0)}
    left_out = tuple((pool, gpus) for pool, gpus in pool_gpus.items() if pool in dark)
    priced = sum(gpus for pool, gpus in pool_gpus.items() if pool not in dark)
    excluded = sum(1 for line in unpriced if line.pool not in dark)
    usd = monthly_usd / (priced * HOURS_PER_MONTH) if priced else None
    return PerGpuHour(usd, priced, left_out, excluded)
