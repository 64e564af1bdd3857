"""What a cluster costs, as data: priced lines and their totals. The shape other views (diff, report) read."""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_MONTH = 730  # 8,760 h / 12: the month every cloud price list uses
CATEGORIES = ("compute", "storage", "network", "facility", "power")
PERIODS = ("month", "once")


@dataclass(frozen=True)
class CostLine:
    """One priced item: quantity × unit price for its period, with where the price comes from."""

    item: str  # "p5.48xlarge on-demand, pool gpu", "DGX H100 server", "power: IT 174 kW x PUE 1.3"
    category: str  # one of CATEGORIES
    quantity: float
    unit: str  # "instance-hour", "server", "switch", "kWh", ...
    unit_usd: float
    total_usd: float  # quantity × unit_usd for this line's period
    period: str  # "month" (recurring, 730 h) or "once" (CapEx)
    source: str  # the price's source (URL or document), or the override file
    date: str  # ISO date the price was read or stated
    estimate: bool  # True where no list price is published
    # Empty when priced; else what has no price, named with its count ("dgx-b200 server x 32 (pool su1)"): the
    # line's $0 is then no figure at all, and the totals leave it out (CostEstimate.unpriced names it).
    unpriced: str = ""
    pool: str = ""  # the pool whose servers or instances the line prices; empty for what no one pool owns
    region: str = ""  # the cloud region the line is priced for (`us-east-2`); empty where prices have no region

    @property
    def priced(self) -> bool:
        return not self.unpriced

    def as_json(self) -> dict[str, object]:
        """An unpriced line has no unit price and no total (null, never 0): a reader summing totals cannot count
        it as free."""
        return {"item": self.item, "quantity": self.quantity, "unit": self.unit,
                "unit_usd": self.unit_usd if self.priced else None,
                "total_usd": self.total_usd if self.priced else None, "period": self.period,
                "category": self.category, "source": self.source, "date": self.date, "estimate": self.estimate,
                "priced": self.priced, "region": self.region or None}


@dataclass(frozen=True)
class PerGpuHour:
    """The cost per GPU-hour and what it divides by, as the one rule makes it (cost/ratios.py): the priced cost
    over the priced GPUs. `usd` is None where it is withheld (`withheld` says why) or where the cluster has no GPU
    at all (then `withheld` is empty: there is nothing to divide by)."""

    usd: float | None
    gpus: int  # the GPUs it divides by: every GPU whose pool has a price
    left_out: tuple[tuple[str, int], ...] = ()  # (pool, its GPUs) whose servers or instances have no price
    excluded: int = 0  # other unpriced items (no GPUs of their own): not in the dividend, so the figure is a floor

    @property
    def withheld(self) -> str:
        """Why there is no figure though the cluster has GPUs; empty where there is one or no GPU at all."""
        if self.usd is not None or not self.left_out:
            return ""
        return f"withheld: no GPU has a price ({self.unpriced_gpus()})"

    def unpriced_gpus(self) -> str:
        """`128 GPUs of pool burst unpriced`, `8 GPUs of pool a and 16 of pool b unpriced`."""
        parts = [f"{gpus:,} GPU{'s' if gpus != 1 else ''} of pool {pool}" if i == 0 else f"{gpus:,} of pool {pool}"
                 for i, (pool, gpus) in enumerate(self.left_out)]
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return f"{joined} unpriced"

    def over(self) -> str:
        """What the figure divides by, in words: `over 512 GPUs`, or `over the 128 priced GPUs (128 GPUs of pool
        burst unpriced)` where a pool is left out."""
        if not self.left_out:
            return f"over {self.gpus:,} GPU{'s' if self.gpus != 1 else ''}"
        return f"over the {self.gpus:,} priced GPU{'s' if self.gpus != 1 else ''} ({self.unpriced_gpus()})"

    def excluding(self) -> str:
        """`excluding 1 other unpriced item`: the items without a price whose cost the figure leaves out (beside
        the pools it leaves out whole); empty where there are none."""
        if not self.excluded:
            return ""
        other = "other " if self.left_out else ""
        return f"excluding {self.excluded:,} {other}unpriced item{'s' if self.excluded != 1 else ''}"

    def as_json(self) -> dict[str, object]:
        return {"usd_per_gpu_hour": self.usd, "gpus": self.gpus,
                "unpriced_gpus": [{"pool": pool, "gpus": gpus} for pool, gpus in self.left_out],
                "usd_per_gpu_hour_withheld": self.withheld or None}


@dataclass(frozen=True)
class CostEstimate:
    """The totals of a cluster's lines. `monthly_usd` is what recurs each month: cloud pools and storage, and
    on-prem power plus the purchase amortised per month; `capex_usd` is the one-off on-prem purchase.

    `savings` are what powering idle on-prem nodes down saves each month at `idle_share` (cost/power_saving.py):
    shown beside the totals, never subtracted from them, since a budget holds every node powered up all month."""

    currency: str
    monthly_usd: float
    capex_usd: float
    usd_per_gpu_hour: float | None  # monthly_usd / (gpus × 730); None without a priced GPU (`per_gpu_hour`)
    gpus: int  # the GPUs usd_per_gpu_hour divides by: those of every pool whose servers or instances have a price
    lines: tuple[CostLine, ...]
    savings: tuple[CostLine, ...] = ()
    idle_share: float | None = None  # the share of the month a power-saved pool's nodes above count are down
    # What the cluster has but no price covers (a server model without a price, ...): named, never counted as $0.
    # Every total above leaves these out, so with any of them each total is a lower bound, not the cost.
    unpriced: tuple[str, ...] = ()
    # The pools left out of `gpus` (their own line has no price) and the other unpriced items: cost/ratios.py.
    ratio: PerGpuHour | None = None

    @property
    def per_gpu_hour(self) -> PerGpuHour:
        """The cost per GPU-hour with what it divides by and what it leaves out: every view words it from here."""
        return self.ratio if self.ratio is not None else PerGpuHour(self.usd_per_gpu_hour, self.gpus)

    @property
    def complete(self) -> bool:
        """Every item has a price: the totals are the estimate, not a floor under it."""
        return not self.unpriced

    @property
    def saved_monthly_usd(self) -> float:
        """Σ of the saving lines: what the powered-down node-hours save per month, not in `monthly_usd`."""
        return sum(line.total_usd for line in self.savings)

    def as_json(self) -> dict[str, object]:
        return {"currency": self.currency, "monthly_usd": self.monthly_usd, "capex_usd": self.capex_usd,
                **self.per_gpu_hour.as_json(),
                "lines": [line.as_json() for line in self.lines],
                "saved_monthly_usd": self.saved_monthly_usd, "idle_share": self.idle_share,
                "savings": [line.as_json() for line in self.savings], "unpriced": list(self.unpriced)}
