"""What a target declares: the facts and hooks the rest of clusterforge asks of it instead of its name.

The kernel sits below the pipeline (load, plan, render, day two), so the hooks' arguments are described here by
what a target reads of them (`RenderInput`), never by importing the stages that pass them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, get_args

from pydantic import BaseModel

from clusterforge.catalog import Entry, Instance, Server

if TYPE_CHECKING:
    from clusterforge.core.errors import Problem
    from clusterforge.core.source import Source
    from clusterforge.model import Cluster, Pool, TargetFabric


@dataclass(frozen=True)
class NodeFacts:
    """What a target knows of a pool's nodes beyond the catalog (on AWS: EFA interfaces, placement group, zone).
    `vars` are written as the pool's inventory vars, in order (each declared with its day-two effect by the target,
    its `day2.py`); `network` describes them for people (the plan's pool table). A target without such facts
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


def _no_node_facts(cluster: Cluster, pool: Pool, entry: Entry) -> NodeFacts:
    return NodeFacts()


def _no_vars(cluster: Cluster) -> dict[str, Any]:
    return {}


def _no_bmc(pool: Pool) -> str | None:
    return None


def _never(cluster: Cluster, pool: Pool) -> bool:
    return False


def _always(cluster: Cluster, pool: Pool) -> bool:
    return True


@dataclass(frozen=True)
class Target:
    """A target's identity (`TARGET` in clusterforge/targets/<name>/__init__.py): what a blueprint calls it, what
    people call it, the kind of hardware its pools use and whether a facility is checked. What it does in each stage
    is that stage's interface, implemented in a module of its own beside this file's TARGET and found by module
    (`target_kernel.stages`): `blueprint.py` (BLUEPRINT), `catalog.py` (CATALOG), `power.py` (POWER), `render.py`
    (RENDER), and the stages' own modules (`cost.py`, `report.py`, `day2.py`, `lab_standins.py`, ...)."""

    name: str  # what `target:` says in a blueprint
    title: str  # for people: "on-prem facility", "AWS"
    hardware: type[Server] | type[Instance]  # the catalog kind its pools use (its own kind of instance type)
    facility: bool = False  # a `site:` describes the facility, and the power, space and cooling rules apply


@dataclass(frozen=True)
class BlueprintPart:
    """What a target brings to the blueprint (`BLUEPRINT` in its `blueprint.py`): the model composes its section,
    pool fields, fabric kinds and managed Lustre (`target_kernel.model`), the kernel's checks refuse them where the
    target is not in use, then ask `problems`; the pipeline asks `with_controller` before it plans."""

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
    software: type[BaseModel] | None = None
    """Pins of the software its nodes install beside every stack (AWS: the EFA installer and aws-ofi-nccl), each a
    field with its default version: the blueprint's `software:` gets them, and each pool's `software:` override
    gets them as optional fields."""
    problems: Callable[[Cluster, Source], Iterator[Problem]] = _no_problems
    """What the target requires of a blueprint beyond the schema (its section, its storage kind)."""
    with_controller: Callable[[Cluster, str | None], tuple[Cluster, bool]] | None = None
    """The cluster with the controller pool the target adds (of the given type, else the target's default),
    and whether it added one."""

    @property
    def exclusive_fabrics(self) -> tuple[str, ...]:
        """The `kind` of each fabric only it offers."""
        return tuple(str(kind) for model in self.fabrics for kind in get_args(model.model_fields["kind"].annotation))


@dataclass(frozen=True)
class NodePower:
    """How clusterforge's power-save programs start and stop a target's nodes (`POWER` in its `power.py`). A target
    without one cannot power nodes, and its pools may not have a `max_count` (SLM-008)."""

    provider: type
    """The class (a `clusterforge.powersave.provider.Provider`) the resume, suspend and reconcile programs make,
    defined in the target's `powersave.py` and named there `PROVIDER`. Render writes the target's name into the
    power-save file; the programs import `clusterforge.targets.<name>.powersave`, so the file names a target, never
    code. That module is copied to controllers alone, so it imports only the standard library, pydantic, its cloud's
    SDK or BMC library, clusterforge.bmc and clusterforge.powersave."""
    powers_pool: Callable[[Cluster, Pool], bool] = _always
    """Whether the provider can start and stop this pool's nodes: every pool of a cloud, only the on-prem pools
    whose servers have BMCs (`bmc: redfish` or `bmc: ipmi`). A pool with a `max_count` it cannot power is refused
    (SLM-008)."""
    needs: str = ""
    """What a pool must say before the provider can power it, for SLM-008's hint ("": nothing)."""
    launches_pool: Callable[[Cluster, Pool], bool] = _never
    """Whether the programs launch this pool's instances even without a `max_count` (its static nodes too, kept up
    by the reconcile timer), so the deployment owns no instance of it and a 16-node and a 12,500-node pool are the
    same resources (`slurm_launched`)."""


@dataclass(frozen=True)
class RenderPart:
    """What a target adds to render and to what reads its deployment back (`RENDER` in its `render.py`)."""

    files: Callable[[RenderInput], dict[str, str]] = _no_files
    """Files render adds for this target, by relative path (the Pulumi stack config)."""
    node_facts: Callable[[Cluster, Pool, Entry], NodeFacts] = _no_node_facts
    """What the target gives a pool's nodes (its catalog entry given): EFA interfaces, placement, zone."""
    group_vars: Callable[[Cluster], dict[str, Any]] = _no_vars
    """The target's own cluster-wide Ansible vars (all.yml), such as the region its nodes run in."""
    project_dir: Path | None = None
    """Its deployment project, relative to the working directory (`stacks/aws`): what the files render adds
    refer to the blueprint from. None: render adds no such file."""
    outputs: OutputsReader | None = None
    """How it reads what its deployment reports (`render --from-outputs`, `inventory --from-outputs`)."""
    bmc_protocol: Callable[[Pool], str | None] = _no_bmc
    """The protocol a pool's BMCs speak (the BMC document's `protocol:`), None where its servers have no BMC the
    blueprint names: render writes their entries of the BMC document from the address plan."""
    pin_vars: tuple[tuple[str, str], ...] = ()
    """Each of its `software:` pins with the role variable it is rendered to (`efa_installer` ->
    `efa_installer_version`): written to every cluster's all.yml, as the roles that read them are applied to every
    cluster and each runs only where its own `<kind>_enabled` says."""
