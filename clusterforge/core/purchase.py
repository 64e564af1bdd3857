"""How cloud capacity is bought: the words a blueprint's `cost.purchase` and the catalog's price tables share.

A foundation (docs/contributing.md, Layers) because both the catalog and the blueprint schema name them."""

from __future__ import annotations

from typing import Literal

Purchase = Literal["on-demand", "capacity-block", "reservation", "savings-plan"]
"""`reservation` (an On-Demand Capacity Reservation) bills at the on-demand rate unless the catalog states a rate
of its own; `savings-plan` at the catalog's Savings Plans rate."""
PURCHASES: tuple[Purchase, ...] = ("on-demand", "capacity-block", "reservation", "savings-plan")
