"""A pool's resources: its cluster placement group, its launch template, and for a pool the stack runs itself one
instance per named node.

A pool slurmctld launches (`PoolDesign.launched_by_slurm`: every compute pool on the baked image) gets the
template only, named as the resume program asks for it (`<cluster>-<pool>`), with one user data for all its nodes:
each learns its name from the tag the resume program sets (`userdata_identify`). So a 16-node and a 12,500-node
pool are the same three resources, and a node that fails is replaced by the reconcile timer, not by a `pulumi up`.

The controller and login nodes (and pools on a pinned AMI, which a push configures) are one `ec2.Instance` per
node, not an auto scaling group: each keeps the planner's name, its inventory entry and its address in the stack's
outputs; replacing one is `pulumi up --replace` of that node. An ASG would renumber nodes, need a dynamic inventory
and scale Capacity Blocks in and out behind the scheduler's back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.components.launch_template import TemplateArgs, launch_template
from clusterforge.targets.aws.design import PoolDesign
from clusterforge.targets.aws.userdata import NodeIdentity, cloud_config
from clusterforge.targets.aws.userdata_boot import BootSource
from clusterforge.targets.aws.userdata_identify import TAG_WAIT_S

CLUSTER_STRATEGY = "cluster"
# Set once at launch: a template or user-data edit must not replace (terminate) running GPU nodes.
# Roll nodes deliberately with `pulumi up --replace <urn>`.
LAUNCH_ONLY = ["launch_template", "user_data"]


@dataclass(frozen=True)
class Controller:
    name: str
    address: pulumi.Output[str] | None  # None while the controller pool itself is being built


@dataclass(frozen=True)
class Node:
    name: str
    pool: PoolDesign
    instance: aws.ec2.Instance


@dataclass(frozen=True)
class PoolTemplate:
    """A pool's launch template, and for a pool the stack runs itself its instances (none when slurmctld
    launches them)."""

    pool: PoolDesign
    template: aws.ec2.LaunchTemplate
    nodes: list[Node]


def user_data(cluster: str, pool: PoolDesign, node: str | None, controller: Controller,
              boot: pulumi.Output[BootSource] | None = None, tag_wait_s: int = TAG_WAIT_S) -> pulumi.Input[str]:
    """Identity only (the roles are pushed later), or with `boot` the boot phase on the baked image; `node`
    None: the pool's, each node learns its name at boot."""

    def document(address: str | None, source: BootSource | None) -> str:
        identity = NodeIdentity(cluster, node, pool.name, pool.role, controller.name, address)
        return cloud_config(identity, source, tag_wait_s)

    if controller.address is None and boot is None:
        return document(None, None)
    return pulumi.Output.all(controller.address, boot).apply(lambda pair: document(pair[0], pair[1]))


def node_pool(name: str, args: TemplateArgs, controller: Controller, parent: pulumi.Resource,
              boot: pulumi.Output[BootSource] | None = None) -> PoolTemplate:
    """`name` is the parent's; children are `{name}-{pool}-pg`, `{name}-{pool}-lt` and, for a pool the stack
    runs, `{name}-{node}`. `args.placement_group` is filled in here when the pool gets a group."""
    pool = args.pool
    child = pulumi.ResourceOptions(parent=parent)
    group = None
    if pool.placement_group is not None:
        group = aws.ec2.PlacementGroup(f"{name}-{pool.name}-pg", name=pool.placement_group,
                                       strategy=CLUSTER_STRATEGY, tags={"Name": pool.placement_group},
                                       opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=True))
    if group is not None:
        args = replace(args, placement_group=group.name)
    if pool.launched_by_slurm:
        if boot is None:
            raise ValueError(f"pool {pool.name}: slurmctld launches it, so its nodes need the baked image")
        pooled = user_data(args.cluster, pool, None, controller, boot, args.join_timeout_s)
        return PoolTemplate(pool, launch_template(f"{name}-{pool.name}-lt", replace(args, user_data=pooled),
                                                  child), [])
    template = launch_template(f"{name}-{pool.name}-lt", args, child)
    version = template.latest_version.apply(str)
    nodes = []
    for node in pool.nodes:
        instance = aws.ec2.Instance(
            f"{name}-{node}", launch_template=aws.ec2.InstanceLaunchTemplateArgs(id=template.id, version=version),
            user_data=user_data(args.cluster, pool, node, controller, boot),
            tags={"Name": node, "clusterforge:node": node, "clusterforge:pool": pool.name,
                  "clusterforge:role": pool.role},
            opts=pulumi.ResourceOptions(parent=parent, ignore_changes=LAUNCH_ONLY))
        nodes.append(Node(node, pool, instance))
    return PoolTemplate(pool, template, nodes)
