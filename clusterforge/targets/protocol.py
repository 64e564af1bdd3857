"""What a target declares: the facts and hooks the rest of clusterforge asks of it instead of its name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from clusterforge.catalog import Instance, Server, Switch

if TYPE_CHECKING:
    from clusterforge.day2.effects import TargetEffects
    from clusterforge.errors import Problem
    from clusterforge.load import Loaded
    from clusterforge.model import Cluster, Pool
    from clusterforge.render.context import RenderContext
    from clusterforge.source import Source


@dataclass(frozen=True)
class NodeFacts:
    """What a target knows of a pool's nodes beyond the catalog: the interfaces and placement its cloud gives
    them. The inventory carries them as the pool's vars; a target without such facts leaves them unset."""

    efa_interfaces: int | None = None
    placement_group: str | None = None
    availability_zone: str | None = None


class Outputs(Protocol):
    """What a deployment reports back (a cloud stack's outputs), as render and `inventory` use it: the target
    that reads them knows their form; everyone else sees this much."""

    @property
    def cluster(self) -> str:
        """The cluster the deployment was made from (a render refuses another blueprint's)."""
        ...

    @property
    def controller_type(self) -> str | None:
        """The hardware the deployment gave the controller, so a render plans the controller actually built."""
        ...

    @property
    def host_count(self) -> int:
        ...

    def overlay(self, rendered: dict[str, Any]) -> dict[str, Any]:
        """The inventory render wrote from the blueprint, with each host's deployed address and facts."""
        ...

    def inventory(self, connection: str) -> dict[str, Any]:
        """An inventory from the outputs alone (`clusterforge inventory`)."""
        ...


@dataclass(frozen=True)
class OutputsReader:
    """How a target reads its deployment's outputs: from a file, or from a stream (`-`: stdin)."""

    file: Callable[[Path], Outputs]
    stream: Callable[[BinaryIO, str], Outputs]


def _no_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    return iter(())


def _no_files(ctx: RenderContext) -> dict[str, str]:
    return {}


def _no_rows(loaded: Loaded) -> list[dict[str, Any]]:
    return []


def _no_node_facts(cluster: Cluster, pool: Pool, entry: Server | Switch | Instance) -> NodeFacts:
    return NodeFacts()


def _no_vars(cluster: Cluster) -> dict[str, Any]:
    return {}


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
    node_facts: Callable[[Cluster, Pool, Server | Switch | Instance], NodeFacts] = _no_node_facts
    """What the target gives a pool's nodes (its catalog entry given): EFA interfaces, placement, zone."""
    group_vars: Callable[[Cluster], dict[str, Any]] = _no_vars
    """The target's own cluster-wide Ansible vars (all.yml), such as the region its nodes run in."""
    project_dir: Path | None = None
    """Its deployment project, relative to the working directory (`stacks/aws`): what the files render adds
    refer to the blueprint from. None: render adds no such file."""
    outputs: OutputsReader | None = None
    """How it reads what its deployment reports (`render --from-stack`, `inventory --from-stack`)."""
    effects: Callable[[], TargetEffects] | None = None
    """What a change to each of its own rendered keys takes on day two (read when a diff is made)."""
