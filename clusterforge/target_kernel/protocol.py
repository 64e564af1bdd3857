"""What a target declares: the facts and hooks the rest of clusterforge asks of it instead of its name.

The kernel sits below the pipeline (load, plan, render, day two), so the hooks' arguments are described here by
what a target reads of them (`RenderInput`), never by importing the stages that pass them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, get_args

from pydantic import BaseModel

from clusterforge.catalog import Catalog, CatalogPart, Entry, Instance, Server

if TYPE_CHECKING:
    from clusterforge.core.errors import Problem
    from clusterforge.core.source import Source
    from clusterforge.model import Cluster, Pool, TargetFabric


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


def _no_node_facts(cluster: Cluster, pool: Pool, entry: Entry) -> NodeFacts:
    return NodeFacts()


def _no_vars(cluster: Cluster) -> dict[str, Any]:
    return {}


def _no_card(cluster: Cluster) -> dict[str, Any] | None:
    return None


def _no_lines() -> list[str]:
    return []


def _no_purchase(cluster: Cluster, pool: Pool) -> str | None:
    return None


def _no_region(cluster: Cluster) -> str | None:
    return None


def _never(cluster: Cluster, pool: Pool) -> bool:
    return False


def _always(cluster: Cluster, pool: Pool) -> bool:
    return True


@dataclass(frozen=True)
class Target:
    """A target's declaration (`TARGET` in clusterforge/targets/<name>/__init__.py)."""

    name: str  # what `target:` says in a blueprint
    title: str  # for people: "on-prem facility", "AWS"
    hardware: type[Server] | type[Instance]  # the catalog kind its pools use (its own kind of instance type)
    facility: bool = False  # a `site:` describes the facility, and the power, space and cooling rules apply
    section: str | None = None  # the blueprint section only this target has (`aws:`)
    section_model: type[BaseModel] | None = None
    """The model of that section: the blueprint model gets it as an optional field named `section`."""
    pool_fields: type[BaseModel] | None = None
    """Fields a pool of this target may give beyond every pool's (`efa_interfaces`): the blueprint's pools get them,
    and a pool of another target that gives one is refused."""
    fabrics: tuple[type[TargetFabric], ...] = ()
    """Fabric kinds only it offers (`efa`), each a `TargetFabric` with a `kind` literal: the blueprint's `fabric`
    gets them, and a cluster of another target that names one is refused."""
    lustre: type[BaseModel] | None = None
    """The managed Lustre its deployment creates (FSx): a form of `storage.lustre`, told apart from an existing file
    system by the keys only it has."""
    mount_prefixes: tuple[str, ...] = ()  # where its managed file system mounts by default: allowed mount points
    catalog: CatalogPart | None = None
    """What it adds to the catalog from its folder: its kind of instance type, its software and price tables, and
    the data files (instance types, prices, software rows) that fill them."""
    power_provider: type | None = None
    """Its power-save provider: the class (a `clusterforge.powersave.provider.Provider`) clusterforge's resume,
    suspend and reconcile programs start and stop its nodes with, defined in the target's `powersave.py` and named
    there `PROVIDER`. Render writes the target's name into the power-save file; the programs import
    `clusterforge.targets.<name>.powersave` and make its `PROVIDER`, so the file names a target, never code. The
    module is copied to controllers alone (`clusterforge.powersave.payload`), so it imports only the
    standard library, pydantic, its cloud's SDK (on-prem: clusterforge.bmc and sushy) and clusterforge.powersave.
    None: the target cannot power nodes, and its pools may not have a `max_count` (SLM-008)."""
    powers_pool: Callable[[Cluster, Pool], bool] = _always
    """Whether its provider can start and stop this pool's nodes, where it has one: every pool of a cloud, only the
    on-prem pools whose servers have BMCs (`bmc: redfish` or `bmc: ipmi`). A pool with a `max_count` that it cannot
    power is refused (SLM-008)."""
    power_needs: str = ""
    """What a pool must say before the provider can power it, for SLM-008's hint ("": nothing)."""
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
    node_facts: Callable[[Cluster, Pool, Entry], NodeFacts] = _no_node_facts
    """What the target gives a pool's nodes (its catalog entry given): EFA interfaces, placement, zone."""
    group_vars: Callable[[Cluster], dict[str, Any]] = _no_vars
    """The target's own cluster-wide Ansible vars (all.yml), such as the region its nodes run in."""
    purchase: Callable[[Cluster, Pool], str | None] = _no_purchase
    """How the deployment buys a pool's capacity, in clusterforge.catalog.prices' terms (`capacity-block`,
    `reservation`, `on-demand`), which its cost is priced at; None: the target does not say."""
    price_region: Callable[[Cluster], str | None] = _no_region
    """The region the blueprint deploys to, whose prices its pools and services are billed at (`us-east-2`): the
    price book prices them from that region's table and names them unpriced where it has none, never at another
    region's figure. None: its prices do not differ by region (on-prem), and only prices for every region apply."""
    project_dir: Path | None = None
    """Its deployment project, relative to the working directory (`stacks/aws`): what the files render adds
    refer to the blueprint from. None: render adds no such file."""
    outputs: OutputsReader | None = None
    """How it reads what its deployment reports (`render --from-outputs`, `inventory --from-outputs`)."""

    @property
    def exclusive_fabrics(self) -> tuple[str, ...]:
        """The `kind` of each fabric only it offers."""
        return tuple(str(kind) for model in self.fabrics for kind in get_args(model.model_fields["kind"].annotation))

    @property
    def powers_nodes(self) -> bool:
        """clusterforge's power-save programs can start and stop its nodes (it has a `power_provider`)."""
        return self.power_provider is not None

    def can_power(self, cluster: Cluster, pool: Pool) -> bool:
        """clusterforge's power-save programs can start and stop this pool's nodes."""
        return self.powers_nodes and self.powers_pool(cluster, pool)
