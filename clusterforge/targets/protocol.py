"""What a target declares: the facts and hooks the rest of clusterforge asks of it instead of its name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clusterforge.catalog import Instance, Server

if TYPE_CHECKING:
    from clusterforge.errors import Problem
    from clusterforge.load import Loaded
    from clusterforge.model import Cluster
    from clusterforge.render.context import RenderContext
    from clusterforge.source import Source


def _no_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    return iter(())


def _no_files(ctx: RenderContext) -> dict[str, str]:
    return {}


def _no_rows(loaded: Loaded) -> list[dict[str, Any]]:
    return []


@dataclass(frozen=True)
class Target:
    """A target's declaration (`TARGET` in clusterforge/targets/<name>/__init__.py)."""

    name: str  # what `target:` says in a blueprint
    title: str  # for people: "on-prem facility", "AWS"
    hardware: type[Server] | type[Instance]  # the catalog kind its pools use
    facility: bool = False  # a `site:` describes the facility, and the power, space and cooling rules apply
    section: str | None = None  # the blueprint section only this target has (`aws:`)
    exclusive_fabrics: tuple[str, ...] = ()  # fabric kinds no other target offers (`efa`)
    efa_software: bool = False  # nodes get the EFA installer and aws-ofi-nccl (SW-001 checks them)
    blueprint_problems: Callable[[Cluster, Source], Iterator[Problem]] = _no_problems
    """What the target requires of a blueprint beyond the schema (its section, its storage kind)."""
    with_controller: Callable[[Cluster, str | None], tuple[Cluster, bool]] | None = None
    """The cluster with the controller pool the target adds (of the given type, else the target's default),
    and whether it added one."""
    render: Callable[[RenderContext], dict[str, str]] = _no_files
    """Files render adds for this target, by relative path (the Pulumi stack config)."""
    report_pools: Callable[[Loaded], list[dict[str, Any]]] = _no_rows
    """Rows of the report's cloud table: pool, hardware, count, GPUs, network."""
