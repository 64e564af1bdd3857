"""Small blueprints built in code, so each rule test states exactly what it changes from a passing design."""

from __future__ import annotations

from typing import Any

import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.catalog import Catalog
from clusterforge.policies import Verdict, evaluate
from clusterforge.policies.config import PolicyConfig


def feed(name: str, side: str, voltage: float = 415, amps: float = 60, phase: int = 3, **extra: Any) -> dict:
    return {"name": name, "side": side, "voltage": voltage, "amps": amps, "phase": phase, **extra}


def rack(name: str = "a01", count: int = 2, pool: str = "gpu", **overrides: Any) -> dict:
    """A 42U, 1,361 kg rack with a 50 kW rear door and 415 V 3φ 60 A A/B feeds (34.5 kW usable per side)."""
    base = {
        "name": name, "u_height": 42, "max_weight_kg": 1361, "tare_weight_kg": 150, "footprint_m2": 0.72,
        "reserved_u": 2, "cooling": {"kind": "rdhx", "air_kw": 50},
        "feeds": [feed(f"{name}-a", "A"), feed(f"{name}-b", "B")],
        "devices": [{"pool": pool, "count": count}] if count else [],
    }
    base.update(overrides)
    return base


# one network rack with room for any fabric these tests build (up to 40 QM9700: 40U, 68.8 kW, 580 kg): 415 V
# 3φ 100 A a side (57.5 kW usable) and a 60 kW door keep the 27 switches of 8 GB200 NVL72 (46.4 kW) under
# PWR-002's 90 % and CLG-001's 80 % warnings
NETWORK_ROW = {"name": "net", "cooling": {"crah_kw": [30, 30]},
               "racks": [rack("n01", count=0, role="network", cooling={"kind": "rdhx", "air_kw": 60},
                              feeds=[feed("n01-a", "A", amps=100), feed("n01-b", "B", amps=100)])]}


def onprem(racks: list[dict] | None = None, pools: list[dict] | None = None, row: dict | None = None,
           network: bool = True, **site: Any) -> dict:
    """A passing on-prem design: DGX H100 pool sized to the racks' placements, one row with N+1 CRAHs, and
    (unless `network=False`) a second row with one `role: network` rack that takes the fabric's switches, so
    a rule test's hand-worked figures for row a are those of its servers alone (plan/switches.py)."""
    racks = racks if racks is not None else [rack()]
    placed = sum(d["count"] for r in racks for d in r.get("devices", []) if d["pool"] == "gpu")
    pools = pools if pools is not None else [
        {"name": "gpu", "hardware": "dgx-h100", "count": max(placed, 1), "partition": "train"}]
    rows = [{"name": "a", "cooling": {"crah_kw": [200, 200]}, "racks": racks, **(row or {})}]
    site_data = {"name": "dc1", "floor_load_kg_per_m2": 1500, "max_inlet_c": 27,
                 "rows": [*rows, NETWORK_ROW] if network else rows}
    site_data.update(site)
    return {
        "apiVersion": "clusterforge/v1", "kind": "Cluster", "name": "t", "target": "onprem",
        "pools": pools, "site": site_data,
        "fabric": {"kind": "infiniband", "switch": "qm9700"},
        "slurm": _partitions(pools),
    }


def _partitions(pools: list[dict]) -> dict:
    compute = [p["name"] for p in pools if p.get("role", "compute") == "compute"]
    return {"partitions": [{"name": "train", "pools": compute, "default": True}]} if compute else {}


def design(pools: list[dict] | None = None, **changes: Any) -> dict:
    """A design-only on-prem blueprint (no site): fabric, software and SLURM rules still run."""
    pools = pools or [{"name": "gpu", "hardware": "dgx-h100", "count": 128, "partition": "train"}]
    data = {"apiVersion": "clusterforge/v1", "kind": "Cluster", "name": "t", "target": "onprem", "pools": pools,
            "fabric": {"kind": "infiniband", "switch": "qm9700"}, "slurm": _partitions(pools)}
    data.update(changes)
    return data


def aws(**overrides: Any) -> dict:
    data = {
        "apiVersion": "clusterforge/v1", "kind": "Cluster", "name": "t", "target": "aws",
        "pools": [{"name": "gpu", "hardware": "p5.48xlarge", "count": 4, "partition": "train"}],
        "fabric": {"kind": "efa"},
        "storage": {"lustre": {"mount": "/fsx", "capacity_gib": 4800, "deployment_type": "PERSISTENT_2",
                               "throughput_mb_s_per_tib": 250}},
        "slurm": {"partitions": [{"name": "train", "pools": ["gpu"], "default": True}]},
        "aws": {"region": "us-east-1", "availability_zones": ["use1-az4"],
                "capacity": {"type": "capacity-block", "reservation_id": "cr-0123456789abcdef0"}},
    }
    data.update(overrides)
    return data


def evaluate_data(data: dict, config: PolicyConfig | None = None, catalog: Catalog | None = None,
                  **kwargs: Any) -> Verdict:
    text = yaml.safe_dump(data, sort_keys=False)
    return evaluate(load_text(text, "bp.yaml", catalog), config=config, **kwargs)


def found(data: dict, level: str | None = "error", config: PolicyConfig | None = None,
          catalog: Catalog | None = None) -> list[str]:
    """Rule ids found at `level` (all levels but info when None)."""
    verdict = evaluate_data(data, config, catalog)
    return sorted(f.id for f in verdict.findings if (f.level == level if level else f.level != "info"))


def config(**rules: dict) -> PolicyConfig:
    """A policy config overriding rule settings, e.g. config(**{"PWR-002": {"enabled": False}})."""
    return PolicyConfig(rules=rules)


def messages(data: dict, rule_id: str) -> list[str]:
    return [f.message for f in evaluate_data(data).findings if f.id == rule_id]
