"""The report's nodes and GPUs, counted the same way: every node the plan names (a power-saved pool's up to its
max_count, as the plan, the render and the cost count them) and the GPUs those nodes carry. A cluster whose pools
run on more than one target (a hall and a cloud burst pool) says how many of each stand on site and how many run
in the cloud, and how many of them are powered up only on demand."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.model import Cluster
from clusterforge.plan import Plan
from clusterforge.target_kernel import pool_target


@dataclass(frozen=True)
class Where:
    """The nodes and GPUs of the pools in one place (`on site`, `in AWS`), and how many of those nodes (and their
    GPUs) are powered up only on demand (above a power-saved pool's count)."""

    place: str
    nodes: int = 0
    gpus: int = 0
    on_demand_nodes: int = 0
    on_demand_gpus: int = 0


def places(cluster: Cluster, plan: Plan) -> list[Where]:
    """Each place's counts, the cluster's own target first, in the order pools name them."""
    found: dict[str, Where] = {}
    for nodes in plan.nodes:
        pool = cluster.pool(nodes.pool)
        target = pool_target(cluster, pool)
        place = "on site" if target.facility else f"in {target.title}"
        per_device = nodes.count // pool.ceiling if pool.ceiling else 0  # the trays of a rack-scale system
        extra = (pool.ceiling - pool.count) * per_device if pool.power_saved else 0
        old = found.get(place, Where(place))
        found[place] = Where(place, old.nodes + nodes.count, old.gpus + nodes.count * nodes.gpu_count,
                             old.on_demand_nodes + extra, old.on_demand_gpus + extra * nodes.gpu_count)
    return list(found.values())


def _note(parts: list[Where], of: str) -> str:
    """`17 on site + 16 in AWS; 16 powered up on demand (max_count)`, for the nodes or the GPUs (`of`)."""
    split = " + ".join(f"{getattr(w, of):,} {w.place}" for w in parts) if len(parts) > 1 else ""
    on_demand = sum(getattr(w, f"on_demand_{of}") for w in parts)
    later = f"{on_demand:,} on nodes powered up on demand (max_count)" if of == "gpus" else \
        f"{on_demand:,} powered up on demand (max_count)"
    return "; ".join(part for part in (split, later if on_demand else "") if part)


def size_cards(cluster: Cluster, plan: Plan) -> list[dict[str, str]]:
    """The summary's `nodes` and `GPUs` cards: the same nodes counted for both, each split by place."""
    parts = places(cluster, plan)
    nodes, gpus = sum(w.nodes for w in parts), sum(w.gpus for w in parts)
    return [{"label": "nodes", "value": f"{nodes:,}", "note": _note(parts, "nodes")},
            {"label": "GPUs", "value": f"{gpus:,}", "note": _note(parts, "gpus")}]


def pool_words(count: int, max_count: int | None, hardware: str) -> str:
    """`16 × p5.48xlarge`, or for a power-saved pool `up to 16 × p5.48xlarge (0 always on)`."""
    if max_count is None:
        return f"{count:,} × {hardware}"
    return f"up to {max_count:,} × {hardware} ({count:,} always on)"
