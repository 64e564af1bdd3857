"""What a target declares: the facts and hooks the rest of clusterforge asks of it instead of its name.

The kernel sits below the pipeline (load, plan, render, day two), so the hooks' arguments are described here by
what a target reads of them (`RenderInput`), never by importing the stages that pass them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from pydantic import BaseModel

from clusterforge.catalog import Catalog, Instance, Server, Switch

if TYPE_CHECKING:
    from clusterforge.errors import Problem
    from clusterforge.model import Cluster, Pool
    from clusterforge.source import Source


@dataclass(frozen=True)
class NodeFacts:
    """What a target knows of a pool's nodes beyond the catalog (on AWS: EFA interfaces, placement group, zone).
    `vars` are written as the pool's inventory vars, in order (each declared with its day-two effect by the target,
    `Target.effects`); `network` describes them for people (the plan's pool table). A target without such facts
    leaves both empty."""

    vars: tuple[tuple[str, Any], ...] = ()
    network: str | None = None


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


class RenderInput(Protocol):
    """What a target's render hook reads (render's RenderContext is one): the blueprint, how the user named it,
    and the deployment project the files it adds refer from."""

    @property
    def cluster(self) -> Cluster:
        ...

    @property
    def source(self) -> str:
        ...

    @property
    def stack_dir(self) -> Path:
        ...

    def header(self, comment: str = "#") -> str:
        """The first line of every rendered file, in the file's comment syntax."""
        ...


@dataclass(frozen=True)
class OutputsReader:
    """How a target reads its deployment's outputs: from a file, or from a stream (`-`: stdin)."""

    file: Callable[[Path], Outputs]
    stream: Callable[[BinaryIO, str], Outputs]


def _no_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    return iter(())


def _no_files(ctx: RenderInput) -> dict[str, str]:
    return {}


def _no_rows(cluster: Cluster, catalog: Catalog) -> list[dict[str, Any]]:
    return []


def _no_node_facts(cluster: Cluster, pool: Pool, entry: Server | Switch | Instance) -> NodeFacts:
    return NodeFacts()


def _no_vars(cluster: Cluster) -> dict[str, Any]:
    return {}


def _no_purchase(cluster: Cluster, pool: Pool) -> str | None:
    return None


def _never(cluster: Cluster, pool: Pool) -> bool:
    return False


@dataclass(frozen=True)
class Target:
    """A target's declaration (`TARGET` in clusterforge/targets/<name>/__init__.py)."""

    name: str  # what `target:` says in a blueprint
    title: str  # for people: "on-prem facility", "AWS"
    hardware: type[Server] | type[Instance]  # the catalog kind its pools use
    facility: bool = False  # a `site:` describes the facility, and the power, space and cooling rules apply
    section: str | None = None  # the blueprint section only this target has (`aws:`)
    section_model: type[BaseModel] | None = None
    """The model of that section: the blueprint model gets it as an optional field named `section`."""
    pool_fields: type[BaseModel] | None = None
    """Fields a pool of this target may give beyond every pool's (`efa_interfaces`): the blueprint's pools get them,
    and a pool of another target that gives one is refused."""
    exclusive_fabrics: tuple[str, ...] = ()  # fabric kinds no other target offers (`efa`)
    efa_software: bool = False  # nodes get the EFA installer and aws-ofi-nccl (SW-001 checks them)
    # clusterforge's resume and suspend programs can start and stop its nodes (a provider of this name in
    # clusterforge/powersave/programs.py), so its pools may have a `max_count` (SLM-008)
    powers_nodes: bool = False
    launches_pool: Callable[[Cluster, Pool], bool] = _never
    """Whether the power-save programs launch this pool's instances even without a `max_count` (its static nodes
    too, kept up by the reconcile timer), so the deployment owns no instance of it and a 16-node and a 12,500-node
    pool are the same resources (`slurm_launched`)."""
    blueprint_problems: Callable[[Cluster, Source], Iterator[Problem]] = _no_problems
    """What the target requires of a blueprint beyond the schema (its section, its storage kind)."""
    with_controller: Callable[[Cluster, str | None], tuple[Cluster, bool]] | None = None
    """The cluster with the controller pool the target adds (of the given type, else the target's default),
    and whether it added one."""
    render: Callable[[RenderInput], dict[str, str]] = _no_files
    """Files render adds for this target, by relative path (the Pulumi stack config)."""
    report_pools: Callable[[Cluster, Catalog], list[dict[str, Any]]] = _no_rows
    """Rows of the report's cloud table: pool, hardware, count, GPUs, network."""
    node_facts: Callable[[Cluster, Pool, Server | Switch | Instance], NodeFacts] = _no_node_facts
    """What the target gives a pool's nodes (its catalog entry given): EFA interfaces, placement, zone."""
    group_vars: Callable[[Cluster], dict[str, Any]] = _no_vars
    purchase: Callable[[Cluster, Pool], str | None] = _no_purchase
    """How the deployment buys a pool's capacity, in clusterforge.catalog.prices' terms (`capacity-block`,
    `reservation`, `on-demand`), which its cost is priced at; None: the target does not say."""
    """The target's own cluster-wide Ansible vars (all.yml), such as the region its nodes run in."""
    project_dir: Path | None = None
    """Its deployment project, relative to the working directory (`stacks/aws`): what the files render adds
    refer to the blueprint from. None: render adds no such file."""
    outputs: OutputsReader | None = None
    """How it reads what its deployment reports (`render --from-outputs`, `inventory --from-outputs`)."""
    effects: Callable[[], Any] | None = None
    """What a change to each of its own rendered keys takes on day two: a `clusterforge.day2.effects.TargetEffects`
    (read when a diff is made; typed loosely so the kernel does not import day two)."""
