"""What the stack builds, decided once from the blueprint, the catalog and the planner (pure, no Pulumi).

Components only turn this into resources, so every figure (EFA cards, root volume, node names, subnets)
comes from the catalog or the planner and can be checked without the Pulumi engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterforge.blueprint.load import Loaded
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.model import Cluster, Pool
from clusterforge.plan import Plan, build_plan
from clusterforge.target_kernel import pool_model, pool_target, slurm_launched, slurm_launches_nodes
from clusterforge.targets.aws.addressing import Addressing, check_room, plan_subnets
from clusterforge.targets.aws.efa import (
    RESERVED_ROLE,
    Interface,
    availability_zone,
    efa_interfaces,
    placement_group,
    reservation,
)
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.layout import EFA, EFA_ONLY, pool_layout
from clusterforge.targets.aws.powersave_launch import launch_template_name
from clusterforge.targets.aws.section import Aws, AwsSecurity, aws_pool, aws_section
from clusterforge.targets.aws.settings import DEFAULT_CONTROLLER_POOL, StackSettings

CONTROLLER_ROLE = "controller"
TARGET = "aws"


@dataclass(frozen=True)
class CapacityTarget:
    """How a pool's instances get capacity: on demand, a targeted ODCR, or a Capacity Block (bought outside)."""

    kind: str  # on-demand | odcr | capacity-block
    reservation_id: str | None = None


@dataclass(frozen=True)
class PoolDesign:
    name: str
    role: str
    instance_type: str
    nodes: tuple[str, ...]
    interfaces: tuple[Interface, ...]
    root_volume_gib: int
    placement_group: str | None  # the planner's name for the pool's cluster placement group
    zone: str  # AZ id
    capacity: CapacityTarget
    placement_opt_out: bool = False  # the blueprint said `placement: none` (NET-006 warns; preview lets it pass)
    launched_by_slurm: bool = False  # `target_kernel.slurm_launched`: a launch template only, no instance (pool.py)
    template_name: str | None = None  # the launch template's EC2 name, which the resume program asks for
    architecture: str = "x86_64"  # the instance type's CPU (catalog): which parent image its node image has

    @property
    def efa(self) -> bool:
        return any(i.interface_type in (EFA, EFA_ONLY) for i in self.interfaces)


@dataclass(frozen=True)
class DataRepository:
    """An S3 location linked to the file system: `s3://bucket/prefix/`."""

    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


@dataclass(frozen=True)
class ClusterDesign:
    name: str
    team: str | None
    region: str
    addressing: Addressing
    pools: tuple[PoolDesign, ...]  # controller pools first: the other nodes' user data names the controller
    controller: str
    implicit_controller: bool  # the blueprint had no controller pool; the stack added one
    lustre: FsxLustre | None
    lustre_zone: str
    data: DataRepository | None
    ami: str | None
    security: AwsSecurity = field(default_factory=AwsSecurity)
    resume_timeout_s: int = 1800  # slurm.conf's ResumeTimeout: how long a launched node may take to join
    # A hybrid (`target: onprem` with cloud pools): `pools` holds only the cloud pools; the controller and the
    # other pools stay on premises, named here so that outputs and the inventory keep the render's names.
    onprem_pools: tuple[str, ...] = ()

    @property
    def hybrid(self) -> bool:
        """The controller is on premises: the stack builds no controller, only the cloud pools."""
        return self.onprem_pools != ()

    @property
    def zones(self) -> tuple[str, ...]:
        return tuple(self.addressing.private)

    @property
    def node_count(self) -> int:
        return sum(len(p.nodes) for p in self.pools)

    def tags(self) -> dict[str, str]:
        """Default tags for every resource (cost allocation and ownership)."""
        tags = {"clusterforge:cluster": self.name, "managed-by": "clusterforge"}
        return tags | ({"clusterforge:team": self.team} if self.team else {})


def cloud_pools(cluster: Cluster) -> list[Pool]:
    """The pools whose nodes run on AWS: every pool of a `target: aws` cluster, the `target: aws` pools of a
    hybrid (an on-prem cluster bursting into a Region, docs/hybrid.md)."""
    return [p for p in cluster.pools if pool_target(cluster, p).name == TARGET]


def _aws(cluster: Cluster) -> Aws:
    aws = aws_section(cluster)
    if aws is None or not cloud_pools(cluster):
        raise ClusterforgeError(Problem(
            "the AWS stack needs a blueprint with an aws: section and pools on AWS (target: aws, or a pool's "
            "target: aws in a hybrid)", path="target" if aws is not None else "aws",
            hint="set target: aws and aws.region/availability_zones, or give the cloud pools target: aws"))
    return aws


def with_controller(cluster: Cluster, instance_type: str) -> tuple[Cluster, bool]:
    """The cluster with a one-node controller pool added when it has none.

    SLURM's controller must outlive the GPU nodes (a Capacity Block ends and terminates its instances), so on
    AWS it gets its own small on-demand instance instead of borrowing the first GPU node as the planner does.
    """
    if any(p.role == CONTROLLER_ROLE for p in cluster.pools):
        return cluster, False
    taken = {p.name for p in cluster.pools}
    name = DEFAULT_CONTROLLER_POOL if DEFAULT_CONTROLLER_POOL not in taken else "slurmctld"
    first = next((p for p in cluster.pools if p.role == RESERVED_ROLE), cluster.pools[0])
    zone = availability_zone(cluster, first)
    fields = {"name": name, "hardware": instance_type, "count": 1, "role": CONTROLLER_ROLE, "placement": "none",
              "availability_zone": zone}
    pool = pool_model().model_validate(fields)
    return cluster.model_copy(update={"pools": [*cluster.pools, pool]}), True


def capacity_for(aws: Aws, pool: Pool) -> CapacityTarget:
    """The blueprint's reservation applies to compute pools; controller and login nodes run on demand."""
    capacity = reservation(aws, pool)
    if capacity is None:
        return CapacityTarget("on-demand")
    return CapacityTarget(capacity.type, capacity.reservation_id)


def data_repository(cluster: Cluster, aws: Aws) -> DataRepository | None:
    """`storage.lustre.import_path`, else `aws.data_bucket` (a name or an s3:// URL)."""
    lustre = cluster.storage.lustre
    location = (lustre.import_path if isinstance(lustre, FsxLustre) else None) or aws.data_bucket
    if not location:
        return None
    bucket, _, prefix = location.removeprefix("s3://").partition("/")
    if not bucket:
        raise ClusterforgeError(Problem(f"data repository {location!r} names no bucket", path="aws.data_bucket",
                                        hint="use a bucket name or s3://bucket/prefix/"))
    prefix = prefix.strip("/")
    return DataRepository(bucket, f"{prefix}/" if prefix else "")


def _pool(cluster: Cluster, aws: Aws, loaded: Loaded, pool: Pool, nodes: tuple[str, ...]) -> PoolDesign:
    instance = loaded.catalog.of(pool.hardware, Ec2Instance)
    zone = availability_zone(cluster, pool)
    if zone is None or zone not in aws.availability_zones:
        raise ClusterforgeError(Problem(f"pool {pool.name} is in AZ {zone}, not one of aws.availability_zones",
                                        path=f"pools[{cluster.pools.index(pool)}].availability_zone",
                                        hint="use one of aws.availability_zones"))
    return PoolDesign(
        name=pool.name, role=pool.role, instance_type=instance.launched_as(pool.hardware), nodes=nodes,
        interfaces=pool_layout(pool.name, instance.launched_as(pool.hardware), instance,
                               efa_interfaces(pool, instance)),
        root_volume_gib=aws_pool(pool).root_volume_gib or instance.root_volume_gib,
        placement_group=placement_group(cluster, pool, instance), zone=zone, capacity=capacity_for(aws, pool),
        placement_opt_out=aws_pool(pool).placement == "none", launched_by_slurm=slurm_launched(cluster, pool),
        template_name=launch_template_name(cluster, pool), architecture=instance.architecture)


def check_pinned_image(aws: Aws, pools: tuple[PoolDesign, ...]) -> None:
    """A pinned `aws.ami` is one image of one architecture: it cannot boot pools of two (the stack bakes one
    image per architecture only when no AMI is pinned)."""
    architectures = sorted({p.architecture for p in pools})
    if aws.ami is not None and len(architectures) > 1:
        named = "; ".join(f"{arch}: {', '.join(p.name for p in pools if p.architecture == arch)}"
                          for arch in architectures)
        raise ClusterforgeError(Problem(f"aws.ami is one image, but the pools run on {len(architectures)} CPU "
                                        f"architectures ({named})", path="aws.ami",
                                        hint="remove aws.ami (the stack bakes an image per architecture), or give "
                                             "every pool, and controllerInstanceType, one architecture"))


def design(loaded: Loaded, settings: StackSettings, planned: Plan | None = None) -> ClusterDesign:
    """Everything the components need, or a ClusterforgeError naming what cannot be built. `planned`: the plan
    the policy check ran on (`analysis.analyze`), when the caller has it.

    A hybrid keeps its controller on premises: no controller is added, and only the cloud pools are built (the
    plan, and so every node name, is the whole cluster's, as `render` plans it)."""
    aws = _aws(loaded.cluster)
    hybrid = loaded.cluster.target != TARGET
    cluster, implicit = (loaded.cluster, False) if hybrid else with_controller(
        loaded.cluster, settings.controller_instance_type)
    plan = planned if planned is not None and planned.slurm is not None else build_plan(cluster, loaded.catalog)
    assert plan.slurm is not None and plan.slurm.controller is not None  # with_controller added one, or the model
    ordered = sorted(cloud_pools(cluster), key=lambda p: p.role != CONTROLLER_ROLE)
    pools = tuple(_pool(cluster, aws, loaded, p, tuple(plan.pool_nodes(p.name).names())) for p in ordered)
    check_pinned_image(aws, pools)
    zones = tuple(z for z in aws.availability_zones if any(p.zone == z for p in pools))
    addressing = plan_subnets(aws.vpc_cidr, zones)
    for zone, cidr in addressing.private.items():
        check_room(cidr, sum(len(p.nodes) for p in pools if p.zone == zone), zone)
    main = next((p for p in pools if p.role == RESERVED_ROLE), pools[0])
    lustre = cluster.storage.lustre
    return ClusterDesign(
        name=cluster.name, team=cluster.team, region=aws.region, addressing=addressing, pools=pools,
        controller=plan.slurm.controller, implicit_controller=implicit,
        lustre=lustre if isinstance(lustre, FsxLustre) else None, lustre_zone=main.zone,
        data=data_repository(cluster, aws), ami=aws.ami, security=aws.security,
        resume_timeout_s=cluster.slurm.recovery.resume_timeout(slurm_launches_nodes(cluster)),
        onprem_pools=tuple(p.name for p in cluster.pools if p.name not in {c.name for c in pools}) if hybrid else ())
