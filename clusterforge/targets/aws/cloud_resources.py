"""pulumi/resources.yaml: what the stack builds from the blueprint, resource by resource, for `clusterforge diff` (the
stack reads the blueprint itself, never this file). It holds the settings whose change the provider treats
differently (data/cloud-changes.yaml says how): the FSx file system and its S3 link, and each pool's launch template
or instances, each with the nodes it serves. Worked out as the stack's design does (design.py), without Pulumi.
"""

from __future__ import annotations

from typing import Any

from clusterforge.blueprint.load import Loaded
from clusterforge.model import Cluster, Pool
from clusterforge.plan import Plan
from clusterforge.render.resource_file import Resource, dump
from clusterforge.render.yamlout import dump as dump_yaml
from clusterforge.target_kernel import slurm_launched
from clusterforge.target_kernel.protocol import RenderInput
from clusterforge.targets.aws.design import (
    CONTROLLER_ROLE,
    TARGET,
    capacity_for,
    cloud_pools,
    data_repository,
    with_controller,
)
from clusterforge.targets.aws.efa import RESERVED_ROLE, availability_zone, efa_interfaces, placement_group
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.fsx_tiering import read_cache
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.section import Aws, aws_pool, aws_section
from clusterforge.targets.aws.settings import DEFAULT_CONTROLLER_TYPE

RESOURCES_FILE = "pulumi/resources.yaml"
PERSISTENT_2 = "PERSISTENT_2"
BAKED = "baked by the stack"  # the image of a pool without `aws.ami`: Image Builder's, from the roles


def _pool(cluster: Cluster, aws: Aws, loaded: Loaded, pool: Pool, nodes: str) -> Resource | None:
    instance = loaded.catalog.get(pool.hardware)
    if not isinstance(instance, Ec2Instance):
        return None
    capacity = capacity_for(aws, pool)
    settings: dict[str, Any] = {
        "instance_type": instance.launched_as(pool.hardware), "count": pool.count, "max_count": pool.max_count,
        "capacity": capacity.kind, "capacity_reservation": capacity.reservation_id,
        "placement_group": placement_group(cluster, pool, instance) or "none",
        "zone": availability_zone(cluster, pool), "efa_interfaces": efa_interfaces(pool, instance),
        "root_volume_gib": aws_pool(pool).root_volume_gib or instance.root_volume_gib, "image": aws.ami or BAKED}
    kind = "launch-template-pool" if slurm_launched(cluster, pool) else "instance-pool"
    return Resource(kind, nodes, settings)


def _lustre(cluster: Cluster, aws: Aws, lustre: FsxLustre, zone: str | None, nodes: str) -> dict[str, Resource]:
    """The file system as the stack's Lustre component sets it up, and the S3 link of a PERSISTENT_2 one."""
    p2 = lustre.deployment_type == PERSISTENT_2
    data = data_repository(cluster, aws)
    elastic = lustre.elastic  # Intelligent-Tiering: no size, a throughput for the whole file system, a read cache
    settings: dict[str, Any] = {
        "deployment_type": lustre.deployment_type, "storage_type": lustre.storage_type,
        "storage_capacity_gib": None if elastic else lustre.capacity_gib, "zone": zone,
        "throughput_mb_s_per_tib": lustre.throughput_mb_s_per_tib if lustre.deployment_type.startswith(
            "PERSISTENT") and not elastic else None,
        "data_compression": lustre.data_compression, "lustre_version": lustre.lustre_version}
    if elastic:
        mode, size = read_cache(lustre) or (None, None)
        settings |= {"throughput_capacity_mb_s": lustre.throughput_capacity_mb_s, "read_cache": mode,
                     "read_cache_gib": size}
    if p2:
        settings |= {"metadata_mode": "USER_PROVISIONED" if lustre.metadata_iops is not None else "AUTOMATIC",
                     "metadata_iops": lustre.metadata_iops}
    else:
        settings["import_path"] = data.url if data is not None else None
    out = {"fsx": Resource("fsx-lustre", nodes, settings)}
    if p2 and data is not None:
        out["fsx data"] = Resource("fsx-data-repository-association", nodes, {"data_repository_path": data.url})
    return out


def resources(loaded: Loaded, plan: Plan) -> dict[str, Resource]:
    """Every resource the stack builds whose change the diff classes, by name: `pool <name>`, `fsx`, `fsx data`."""
    aws = aws_section(loaded.cluster)
    if aws is None:
        return {}
    hybrid = loaded.cluster.target != TARGET  # a hybrid's controller stays on premises: the stack adds none
    cluster = loaded.cluster if hybrid else with_controller(loaded.cluster, DEFAULT_CONTROLLER_TYPE)[0]
    pools = sorted(cloud_pools(cluster), key=lambda p: p.role != CONTROLLER_ROLE)
    planned = {nodes.pool: nodes.hostlist for nodes in plan.nodes if nodes.count}
    out: dict[str, Resource] = {}
    for pool in pools:
        found = _pool(cluster, aws, loaded, pool, planned.get(pool.name, ""))
        if found is not None:
            out[f"pool {pool.name}"] = found
    lustre = cluster.storage.lustre
    if isinstance(lustre, FsxLustre) and pools:
        main = next((p for p in pools if p.role == RESERVED_ROLE), pools[0])  # design(): the file system's zone
        out |= _lustre(cluster, aws, lustre, availability_zone(cluster, main), ",".join(planned.values()))
    return out


def render(ctx: RenderInput) -> dict[str, str]:
    """The file, for a render that has the blueprint's plan (render's RenderContext)."""
    from clusterforge.render.context import RenderContext

    if not isinstance(ctx, RenderContext):
        return {}
    found = resources(ctx.loaded, ctx.plan)
    return {RESOURCES_FILE: ctx.header() + dump_yaml(dump(found))} if found else {}
