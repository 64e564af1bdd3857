"""Blueprints for planner tests: empty racks and pools the planner must place (builds on the policy builders)."""

from __future__ import annotations

from typing import Any

import yaml

from clusterforge.blueprint.load import Loaded, load_text
from clusterforge.plan import Plan, build_plan
from clusterforge.policies.config import PolicyConfig
from tests.policies.builders import feed, onprem, rack

__all__ = ["big_rack", "feed", "load", "onprem", "per_rack", "plan_of", "rack", "site", "unplaced_pool"]


def big_rack(name: str, **overrides: Any) -> dict:
    """An empty rack where nothing binds for a handful of DGX H100: 60U, 415 V 3φ 300 A per side (172.5 kW),
    3,000 kg, a 200 kW rear door. Tests shrink one figure to make that limit bind."""
    base = rack(name, count=0, u_height=60, reserved_u=0, max_weight_kg=3000,
                cooling={"kind": "rdhx", "air_kw": 200},
                feeds=[feed(f"{name}-a", "A", amps=300), feed(f"{name}-b", "B", amps=300)])
    base.update(overrides)
    return base


def unplaced_pool(count: int, hardware: str = "dgx-h100", name: str = "gpu", **extra: Any) -> dict:
    pool = {"name": name, "hardware": hardware, "count": count, **extra}
    if pool.get("role", "compute") == "compute":
        pool["partition"] = "train"
    return pool


def site(racks: list[dict], pools: int | list[dict], **site_fields: Any) -> dict:
    """A site of `racks` with no floor limit and a row plant that never binds, and pools to place. No network
    rack: the fabric's switches take what room the pools leave, after them, so the pools' counts per rack are
    what each test works out by hand."""
    pools = [unplaced_pool(pools)] if isinstance(pools, int) else pools
    data = onprem(racks, pools=pools, network=False, **site_fields)
    if "floor_load_kg_per_m2" not in site_fields:
        del data["site"]["floor_load_kg_per_m2"]
    data["site"]["rows"][0]["cooling"] = {"cdu_kw": [2000, 2000]}  # no CRAHs listed; CDUs that never bind
    return data


def load(data: dict) -> Loaded:
    return load_text(yaml.safe_dump(data, sort_keys=False), "bp.yaml")


def plan_of(data: dict, config: PolicyConfig | None = None) -> Plan:
    loaded = load(data)
    return build_plan(loaded.cluster, loaded.catalog, config)


def per_rack(plan: Plan, pool: str = "gpu") -> list[int]:
    """Devices of `pool` in each rack, in blueprint order."""
    return [sum(d.count for d in rack.devices if d.pool == pool) for rack in plan.racks]
