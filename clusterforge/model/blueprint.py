"""The blueprint: one declarative description of a GPU cluster (shape only; physics is the policies' job)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Field, StringConstraints, Tag

from clusterforge.accelerator_kernel import stacks
from clusterforge.core.purchase import Purchase
from clusterforge.core.text import (
    CatalogKey,
    FreeText,
    Fsname,
    Gres,
    LnetNids,
    MountOptions,
    MountPath,
    NfsSource,
    VersionPin,
)
from clusterforge.core.validation import expected
from clusterforge.model.base import Count, Kw, Name, NodeCount, ObjectName, SetsSlurm, Strict
from clusterforge.model.cost import Budget, CostSettings
from clusterforge.model.operations import Operations
from clusterforge.model.site import Site
from clusterforge.model.slurm import Slurm

Role = Literal["compute", "login", "controller", "storage"]


if TYPE_CHECKING:
    Stack = str
else:  # each registered accelerator vendor's stack (clusterforge.accelerators): a new vendor is one module there
    Stack = Literal[stacks()]

# How a power-up of several nodes for one job is asked of the cloud: all of them or none (a job needs every node it
# was given: half a fleet only bills), or as many as there is capacity for (ParallelCluster's two modes; its default
# is all-or-nothing).
Scaling = Literal["all-or-nothing", "best-effort"]


TARGET_NAME = r"^[a-z][a-z0-9-]{0,31}$"
TargetName = Annotated[str, StringConstraints(pattern=TARGET_NAME), Field(description=expected(
    TARGET_NAME, "a target name: a package under clusterforge/targets, such as onprem"))]



class SoftwarePins(Strict):
    """Version pins only, every one optional: a pool's `software:` override of the cluster's pins (a pool of another
    OS image or driver generation), so one blueprint can run pools on different releases. Its fields are every
    accelerator vendor's and target's pins, composed with the blueprint model (clusterforge.target_kernel.model)."""

    def pins(self) -> dict[str, str]:
        """The pins this override sets, by field."""
        return {name: value for name, value in self.model_dump().items() if value is not None}


class Pool(Strict):
    """A group of identical nodes, owned by the cluster's target or the one its `target` names (a cloud pool of an
    on-prem cluster). Each target adds fields of its own, such as `efa_interfaces` on AWS."""

    # the targets' own fields are added by clusterforge.target_kernel.blueprint_model, which composes this model

    name: Name
    hardware: CatalogKey
    # the nodes always on; 0 only with max_count (every node powered up on demand)
    count: Annotated[NodeCount, SetsSlurm("SuspendExcNodes", note="the always-on nodes of power-saved pools")]
    # The ceiling SLURM may power up on demand (power saving): nodes count+1..max_count are powered up for jobs and
    # down when idle. Node names, racks, feeds and cooling are planned for max_count, the worst case.
    max_count: Annotated[Count | None, SetsSlurm("ResumeProgram", "SuspendProgram", "ResumeFailProgram",
                                                 note="clusterforge-resume, clusterforge-suspend")] = None
    scaling: Scaling = "all-or-nothing"  # how a job's nodes are powered up (power saving only)
    role: Role = "compute"
    target: TargetName | None = None  # the target that owns this pool's nodes, when not the cluster's
    partition: Name | None = None
    max_power_kw: Kw | None = None
    gres: Gres | None = None
    software: SoftwarePins | None = None  # this pool's own version pins over the cluster's `software`
    purchase: Purchase | None = None  # how this pool's cloud capacity is bought, for its cost (over `cost.purchase`)

    @property
    def ceiling(self) -> int:
        """The most devices the pool may have at once: `max_count` with power saving, else `count`. Everything
        planned from the pool (node names, racks, feeds, cooling, fabric ports) is planned for this many."""
        return self.max_count if self.max_count is not None else self.count

    @property
    def power_saved(self) -> bool:
        """SLURM powers this pool's nodes beyond `count` up on demand and down when idle."""
        return self.max_count is not None


Ratio = Annotated[float, Field(ge=1.0, le=64.0)]  # down:up bandwidth of a switch, as x for x:1


class Oversubscription(Strict):
    """Down:up bandwidth per tier of the fat tree, each as x for x:1.

    `leaf`: a leaf's ports to nodes over its ports to spines (what a single `oversubscription: 2` sets).
    `spine`: in a three-tier tree, a spine's ports to leaves over its ports to cores: above 1 a pod holds more
    leaves and fewer cores are needed, at the price of bandwidth between pods (Meta's "AI zones" are built this
    way). A two-tier spine has no uplinks, so `spine` changes nothing there.
    """

    leaf: Ratio = 1.0
    spine: Ratio = 1.0


def _ratio_form(value: Any) -> str:
    """A mapping (or a model) is the per-tier form; anything else is the single number, so a wrong value gets
    one error about what it should be, not one per form."""
    return "tiers" if isinstance(value, dict | BaseModel) else "leaf"


OversubscriptionForm = Annotated[
    Annotated[Ratio, Tag("leaf")] | Annotated[Oversubscription, Tag("tiers")], Discriminator(_ratio_form)
]


class SwitchedFabric(Strict):
    """An InfiniBand, RoCE or Ethernet fat tree built from a catalog switch."""

    kind: Literal["infiniband", "roce", "ethernet"]
    switch: CatalogKey = "qm9700"
    tiers: Literal["auto", 1, 2, 3] = "auto"
    # one number is the leaf's ratio (the contract since v1); a mapping gives it per tier
    oversubscription: OversubscriptionForm = 1.0
    rail_optimized: bool = True
    leaves: Annotated[int, Field(ge=1)] | None = None
    spines: Annotated[int, Field(ge=1)] | None = None
    cores: Annotated[int, Field(ge=1)] | None = None

    @property
    def ratios(self) -> Oversubscription:
        """The oversubscription per tier, whichever form the blueprint used."""
        given = self.oversubscription
        return given if isinstance(given, Oversubscription) else Oversubscription(leaf=given)


class TargetFabric(Strict):
    """A fabric kind only a target offers, such as AWS's EFA: no switches to size. The target's own model (a
    subclass whose `kind` is a literal, its `BlueprintPart.fabrics`) is added when the blueprint model is composed
    (clusterforge.target_kernel.blueprint_model), told apart from the switched kinds by `kind`."""

    kind: str


Fabric = SwitchedFabric | TargetFabric


class OnPremLustre(Strict):
    """An existing Lustre file system the nodes mount."""

    mount: MountPath = "/lustre"
    mgs_nid: LnetNids | None = None
    fsname: Fsname | None = None
    write_gb_s: Annotated[float, Field(gt=0)] | None = None
    mount_options: MountOptions = "defaults,_netdev,flock,nosuid,nodev"


class SharedStorage(Strict):
    """A shared file system (NFS or alike) every node mounts: home directories, job scripts, and the
    controllers' StateSaveLocation when there are two. Without `source` the mount point is only created:
    something else (the lab's volume, an automounter) provides it."""

    mount: MountPath
    source: NfsSource | None = None
    options: MountOptions = "defaults,_netdev,nosuid,nodev"


class Storage(Strict):
    # an existing Lustre: a target adds the managed one its deployment creates (its `BlueprintPart.lustre`) when
    # the blueprint model is composed, told apart by the keys only it has
    lustre: OnPremLustre | None = None
    shared: SharedStorage | None = None


class Software(Strict):
    """Pinned versions; the defaults are a current CUDA set the compatibility tables know to work together.

    Each accelerator vendor's pins sit side by side (its module's `software_fields`, with its `versions` as their
    defaults), added when the blueprint model is composed, as a target's own pins are (its
    `BlueprintPart.software`); each pool is checked against, and gets, the pins of its own accelerators' vendor, so
    partitions of several vendors share one cluster. `stack`, when set, declares that every accelerator pool runs
    that one stack."""

    stack: Stack | None = None
    slurm: VersionPin = "24.11"

    def pin(self, name: str) -> str | None:
        """The version pinned for `name` (a vendor's or a target's field of the composed model), or None."""
        value = getattr(self, name, None)
        return None if value is None else str(value)

    def version(self, name: str) -> str:
        """The version pinned for `name` where the caller knows it is set (a default, or a set its vendor's check
        found complete); "" where it is not."""
        return self.pin(name) or ""

    def pins(self) -> dict[str, str]:
        """Every version pinned, by field (the fields of other stacks left unset are not pins)."""
        return {name: value for name, value in self.model_dump().items() if name != "stack" and value is not None}

    def with_override(self, override: SoftwarePins | None) -> Software:
        """These pins with a pool's override applied (self when there is none)."""
        return self if override is None else self.model_copy(update=override.pins())


class Workload(Strict):
    model_params_b: Annotated[float, Field(gt=0, le=1_000_000)]
    max_checkpoint_s: Annotated[float, Field(gt=0)] = 120
    bytes_per_param: Annotated[float, Field(gt=0, le=64)] = 14


class TeamPlacement(Strict):
    """Devices of this blueprint's pool in a rack of a shared site file (`site: !include site.yaml`)."""

    rack: ObjectName
    pool: Name
    count: Count = 1
    position: Annotated[int, Field(ge=1, le=100)] | None = None


class Cluster(Strict):
    """A GPU training cluster. Field names are a public contract: add freely, rename with deprecation. Each target
    adds a section of its own, such as `aws:`."""

    # the targets' sections are added by clusterforge.target_kernel.blueprint_model (a new target is a new folder)

    apiVersion: Literal["clusterforge/v1"]
    kind: Literal["Cluster"]
    name: Name
    team: Name | None = None
    description: FreeText | None = None  # for people (the login banner); reaches nodes only as data
    target: TargetName  # a package under clusterforge/targets (target_kernel/checks.py checks it is one)
    pools: Annotated[list[Pool], Field(min_length=1)]
    site: Site | None = None
    fabric: Annotated[Fabric | None, SetsSlurm("TopologyPlugin", note="topology.conf is rendered from it")] = None
    storage: Storage = Storage()
    slurm: Slurm = Slurm()
    operations: Operations = Operations()
    software: Software = Software()
    workload: Workload | None = None
    placement: list[TeamPlacement] = []
    cost: CostSettings = CostSettings()  # how capacity is bought and a purchase amortised (clusterforge cost)
    budget: Budget | None = None  # limits `check` holds the cost estimate to (COST-001, COST-002)

    def pool(self, name: str) -> Pool:
        return next(p for p in self.pools if p.name == name)

