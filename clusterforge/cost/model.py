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
class CostEstimate:
    """The totals of a cluster's lines. `monthly_usd` is what recurs each month: cloud pools and storage, and
    on-prem power plus the purchase amortised per month; `capex_usd` is the one-off on-prem purchase.

    `savings` are what powering idle on-prem nodes down saves each month at `idle_share` (cost/power_saving.py):
    shown beside the totals, never subtracted from them, since a budget holds every node powered up all month."""

    currency: str
    monthly_usd: float
    capex_usd: float
    usd_per_gpu_hour: float | None  # monthly_usd / (gpus × 730); None without GPUs
    gpus: int
    lines: tuple[CostLine, ...]
    savings: tuple[CostLine, ...] = ()
    idle_share: float | None = None  # the share of the month a power-saved pool's nodes above count are down
    # What the cluster has but no price covers (a server model without a price, ...): named, never counted as $0.
    # Every total above leaves these out, so with any of them each total is a lower bound, not the cost.
    unpriced: tuple[str, ...] = ()

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
                "usd_per_gpu_hour": self.usd_per_gpu_hour, "gpus": self.gpus,
                "lines": [line.as_json() for line in self.lines],
                "saved_monthly_usd": self.saved_monthly_usd, "idle_share": self.idle_share,
                "savings": [line.as_json() for line in self.savings], "unpriced": list(self.unpriced)}
