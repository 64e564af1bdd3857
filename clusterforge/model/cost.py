"""What a blueprint says about money: how its capacity is bought, how a purchase is spread over months, and the
budgets `check` holds the estimate to (COST-001, COST-002). Shape only; the arithmetic is clusterforge/cost."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from clusterforge.core.purchase import Purchase
from clusterforge.model.base import Strict

DEFAULT_AMORTISE_YEARS = 4
"""Servers bought are spread over four years: the useful life commonly planned for a GPU generation (the
next one arrives in two to three years); a site's finance rule replaces it with `cost.amortise_years`."""

Usd = Annotated[float, Field(gt=0, le=1e12)]


class CostSettings(Strict):
    """`cost:` — `purchase` prices every cloud pool that does not set its own (`pools[].purchase`); without
    either, a pool is priced the way the deployment buys it (a Capacity Block or reservation the blueprint's
    target names), else on demand."""

    purchase: Purchase | None = None
    amortise_years: Annotated[float, Field(gt=0, le=30)] = DEFAULT_AMORTISE_YEARS


class Budget(Strict):
    """`budget:` — limits on the estimate; each is optional. `check` fails when the estimate exceeds one."""

    monthly_usd: Usd | None = None  # recurring per month (cloud, or on-prem power plus the purchase amortised)
    capex_usd: Usd | None = None  # the one-off on-prem purchase
    usd_per_gpu_hour: Usd | None = None  # monthly cost over GPU-hours (GPUs x 730 h)
