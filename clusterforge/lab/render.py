"""Render the lab's blueprint (resized to the requested node count) with the same renderer as production."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.model import Cluster
from clusterforge.render.yamlout import load

DEFAULT_BLUEPRINT = "blueprint.yaml"
DEFAULT_CATALOG = "catalog.yaml"


def data_file(name: str) -> Path:
    return Path(str(resources.files("clusterforge.lab") / "data" / name))


def resized(cluster: Cluster, nodes: int) -> Cluster:
    """The cluster with its first compute pool grown or shrunk so that it has `nodes` nodes in all."""
    compute = next((p for p in cluster.pools if p.role == "compute"), None)
    others = sum(p.count for p in cluster.pools if p is not compute)
    if compute is None or nodes - others < 1:
        raise ClusterforgeError(Problem(
            f"--nodes {nodes} leaves no compute node ({others} nodes are in other pools)", path="--nodes",
            hint=f"use --nodes {others + 1} or more"))
    pools = [p.model_copy(update={"count": nodes - others}) if p is compute else p for p in cluster.pools]
    return cluster.model_copy(update={"pools": pools})


def render(blueprint: Path, catalogs: Sequence[Path], nodes: int | None, out: Path) -> None:
    """Write inventory/, group_vars and slurm/ for the lab into `out` (replaced as a whole)."""
    from clusterforge import analysis
    from clusterforge.load import Loaded
    from clusterforge.render import RenderContext, write

    policy = analysis.read_policy(analysis.PolicyInputs(catalogs=tuple(catalogs)))
    loaded = analysis.load(blueprint, policy)
    if nodes is not None:
        loaded = Loaded(resized(loaded.cluster, nodes), loaded.source, loaded.catalog)
    result = analysis.analyze(loaded, policy)
    result.refuse_on_errors("the lab")
    write(RenderContext(loaded, result.plan, out / "pulumi"), out)


def inventory_hosts(inventory: Path) -> dict[str, tuple[str, ...]]:
    """Every host of a rendered hosts.yml with the groups it is in (children resolved), in file order."""
    data: dict[str, Any] = load(inventory.read_text()) or {}
    membership: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}

    def walk(group: str, body: dict[str, Any] | None) -> None:
        body = body or {}
        for host in body.get("hosts") or {}:
            membership.setdefault(host, [])
            if group != "all":
                membership[host].append(group)
        for child, child_body in (body.get("children") or {}).items():
            children.setdefault(group, []).append(child)
            walk(child, child_body)

    walk("all", data.get("all"))

    def ancestors(group: str) -> list[str]:
        parents = [g for g, kids in children.items() if group in kids and g != "all"]
        return parents + [a for p in parents for a in ancestors(p)]

    return {host: tuple(dict.fromkeys(g for group in groups for g in (group, *ancestors(group))))
            for host, groups in membership.items()}


def group_vars(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = load((out / "inventory/group_vars/all.yml").read_text()) or {}
    return data
