"""A pool's resources: its cluster placement group, its launch template and one instance per named node.

One `ec2.Instance` per node, not an auto scaling group: every node keeps the planner's name (`gpu-0001`),
its SLURM NodeName and its inventory entry; replacing one node is `pulumi up --replace` of that node; and
the stack's outputs carry every address the inventory needs. An ASG would renumber nodes, need a dynamic
inventory, and scale whole Capacity Blocks in and out behind the scheduler's back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.components.launch_template import TemplateArgs, launch_template
from clusterforge.targets.aws.design import PoolDesign
from clusterforge.targets.aws.userdata import NodeIdentity, cloud_config
from clusterforge.targets.aws.userdata_boot import BootSource

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


def user_data(cluster: str, pool: PoolDesign, node: str, controller: Controller,
              boot: pulumi.Output[BootSource] | None = None) -> pulumi.Input[str]:
    """Identity only (the roles are pushed later), or with `boot` the boot phase on the baked image."""

    def document(address: str | None, source: BootSource | None) -> str:
        return cloud_config(NodeIdentity(cluster, node, pool.name, pool.role, controller.name, address), source)

    if controller.address is None and boot is None:
        return document(None, None)
    return pulumi.Output.all(controller.address, boot).apply(lambda pair: document(pair[0], pair[1]))


def node_pool(name: str, args: TemplateArgs, controller: Controller, parent: pulumi.Resource,
              boot: pulumi.Output[BootSource] | None = None) -> list[Node]:
    """`name` is the parent's; children are `{name}-{pool}-pg`, `{name}-{pool}-lt` and `{name}-{node}`.
    `args.placement_group` is filled in here when the pool gets a group."""
    pool = args.pool
    child = pulumi.ResourceOptions(parent=parent)
    group = None
    if pool.placement_group is not None:
        group = aws.ec2.PlacementGroup(f"{name}-{pool.name}-pg", name=pool.placement_group,
                                       strategy=CLUSTER_STRATEGY, tags={"Name": pool.placement_group},
                                       opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=True))
    template = launch_template(f"{name}-{pool.name}-lt",
                               replace(args, placement_group=group.name) if group is not None else args, child)
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
    return nodes
