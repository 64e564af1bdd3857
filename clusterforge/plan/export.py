"""The plan as plain data (for `plan --format json` and other tools): everything, nodes as hostlist runs."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from clusterforge.core.hostlist import compress
from clusterforge.files.yamlsource import format_path
from clusterforge.plan.bom import fabric_bom
from clusterforge.plan.model import Plan, PoolNodes, RackLimits, RackLoad


def rack_dict(load: RackLoad, limit: RackLimits | None) -> dict[str, Any]:
    rack = load.rack
    out: dict[str, Any] = {
        "name": rack.name, "row": rack.row, "path": format_path(rack.path),
        "devices": [{"pool": d.pool, "count": d.count, "position": d.position, "explicit": d.explicit}
                    for d in rack.devices],
        "switches": [{"tier": s.tier, "count": s.count, "switch": s.switch} for s in rack.switches],
        "used": {"u": load.u_used, "weight_kg": round(load.weight_kg + (limit.tare_kg if limit else 0), 3),
                 "kw": round(load.power_kw, 3), "air_kw": round(load.air_heat_kw, 3),
                 "liquid_kw": round(load.liquid_heat_kw, 3)},
    }
    if limit is not None:
        out["limits"] = {"u": limit.u, "weight_kg": round(limit.kg, 3), "kw": round(limit.kw, 3),
                         "air_kw": round(limit.air_kw, 3), "liquid_kw": round(limit.liquid_kw, 3),
                         "liquid": limit.liquid}
    return out


def pool_dict(pool: PoolNodes) -> dict[str, Any]:
    """A pool's nodes as JSON: its fields, with the facts its target gives them (`efa_interfaces` on AWS) as keys of
    their own."""
    out = {key: value for key, value in asdict(pool).items() if key not in ("runs", "target_vars")}
    out |= dict(pool.target_vars)
    out["hostlist"] = pool.hostlist
    out["runs"] = [{"hosts": compress(pool.name(run.first + i) for i in range(run.count)), "rack": run.rack,
                    "row": run.row, "positions": list(run.positions)} for run in pool.runs]
    return out


def plan_dict(plan: Plan) -> dict[str, Any]:
    limits: list[RackLimits | None] = list(plan.limits) or [None] * len(plan.loads)
    fabric = plan.fabric
    return {
        "racks": [rack_dict(load, limit) for load, limit in zip(plan.loads, limits, strict=True)],
        "placement": asdict(plan.placement) if plan.placement else None,
        "unplaced": plan.unplaced,
        "switches": asdict(plan.switches) if plan.switches else None,
        "fabric": None if fabric is None else {
            **asdict(fabric), "switches": fabric.switches, "cables": fabric.cables,
            "tiers_bom": [asdict(t) for t in fabric_bom(fabric)]},
        "topology": None if plan.topology is None else [
            {"name": s.name, "tier": s.tier, "nodes": compress(s.nodes), "switches": compress(s.children)}
            for s in plan.topology.switches],
        "nodes": [pool_dict(pool) for pool in plan.nodes],
        "slurm": asdict(plan.slurm) if plan.slurm else None,
    }
