"""Compute: the node role, the image, and every pool's launch template and the nodes the stack runs, controller
pools first.

A pool slurmctld launches (every compute pool on the baked image) is a launch template and no instance: the
controller's role may launch from it and terminate what it launched (policy_documents.power_save_access), so the
resources are the same for 16 nodes and 12,500.

The image: the blueprint's `aws.ami` as it is (identity-only user data; the roles are pushed later), else the
node image baked from the base AMI (components/image.py), whose nodes run the roles' boot phase themselves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.bake import NodeConfig
from clusterforge.targets.aws.components.identity import NodeRole, NodeRoleArgs
from clusterforge.targets.aws.components.image import NodeImage, NodeImageArgs
from clusterforge.targets.aws.components.launch_template import TemplateArgs
from clusterforge.targets.aws.components.pool import Controller, Node, PoolTemplate, node_pool
from clusterforge.targets.aws.design import CONTROLLER_ROLE, ClusterDesign
from clusterforge.targets.aws.policy_documents import power_save_access
from clusterforge.targets.aws.settings import DEFAULT_IMAGE_INSTANCE_TYPE


@dataclass(frozen=True)
class ComputeArgs:
    design: ClusterDesign
    subnet_ids: Mapping[str, pulumi.Input[str]]  # AZ id -> subnet
    security_group_id: pulumi.Input[str]
    ami_parameter: str  # SSM parameter read when the blueprint pins no aws.ami
    checkpoint_bucket: pulumi.Input[str] | None = None
    kms_key_arn: str | None = None
    node_config: NodeConfig | None = None  # what to bake; None (the blueprint pins aws.ami): nothing is baked
    image_instance_type: str = DEFAULT_IMAGE_INSTANCE_TYPE
    egress: bool = False  # a NAT gateway: the image build reaches package repositories


def image(design: ClusterDesign, parameter: str, parent: pulumi.Resource) -> pulumi.Output[str]:
    """The blueprint's AMI, else the DLAMI the SSM parameter names today (resolved at deploy time): what the
    nodes boot when the blueprint pins it, the parent of the baked image otherwise."""
    if design.ami is not None:
        return pulumi.Output.from_input(design.ami)
    return aws.ssm.get_parameter_output(name=parameter, opts=pulumi.InvokeOutputOptions(parent=parent)).value


def root_device(image_id: pulumi.Output[str], parent: pulumi.Resource) -> pulumi.Output[str]:
    """The image's root device name (/dev/sda1 on Ubuntu, /dev/xvda on Amazon Linux)."""
    filters = image_id.apply(lambda ami: [aws.ec2.GetAmiFilterArgs(name="image-id", values=[ami])])
    found = aws.ec2.get_ami_output(filters=filters, opts=pulumi.InvokeOutputOptions(parent=parent))
    return found.root_device_name


def node_role_args(args: ComputeArgs, baked: NodeImage | None) -> NodeRoleArgs:
    design = args.design
    return NodeRoleArgs(design.name, design.region, args.checkpoint_bucket, design.data, args.kms_key_arn,
                        tuple(design.security.node_policies), baked.node_policy if baked is not None else None)


class Compute(pulumi.ComponentResource):
    nodes: list[Node]  # the instances the stack runs (controller and login nodes; pools on a pinned AMI)
    pools: list[PoolTemplate]
    controller: Node
    image_id: pulumi.Output[str]

    def __init__(self, name: str, args: ComputeArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:Compute", name, None, opts)
        design = args.design
        base = image(design, args.ami_parameter, self)
        device = root_device(base, self)  # a baked image keeps its parent's root device
        baked = None
        if args.node_config is not None:
            baked = NodeImage(f"{name}-image", NodeImageArgs(
                design, args.node_config, base, args.subnet_ids[design.lustre_zone], args.security_group_id,
                args.image_instance_type, args.kms_key_arn, args.egress), pulumi.ResourceOptions(parent=self))
        role = NodeRole(f"{name}-nodes", node_role_args(args, baked), pulumi.ResourceOptions(parent=self))
        controller_role = role
        launches = any(p.launched_by_slurm for p in design.pools)
        if launches or baked is not None:  # the controllers alone launch nodes and make the munge key
            power_save = role.role_arn.apply(lambda arn: json.dumps(power_save_access(design.region, design.name,
                                                                                      arn))) if launches else None
            controller_role = NodeRole(f"{name}-controller", replace(
                node_role_args(args, baked), power_save_policy=power_save,
                boot_policy=baked.controller_policy if baked is not None else None),
                pulumi.ResourceOptions(parent=self))
        images = {pool.name: baked.ami_for(pool.name) if baked is not None else base for pool in design.pools}
        main = next((p for p in design.pools if p.role == "compute"), design.pools[0])
        self.image_id = images[main.name]  # the outputs' `ami`: the compute pools' image
        controller = Controller(design.controller, None)
        self.nodes, self.pools = [], []
        for pool in design.pools:  # controller pools first: the others' user data needs its address
            profile = (controller_role if pool.role == CONTROLLER_ROLE else role).instance_profile_arn
            made = node_pool(name, TemplateArgs(
                design.name, pool, images[pool.name], device, args.subnet_ids[pool.zone], [args.security_group_id],
                profile, kms_key_arn=args.kms_key_arn, imds_tokens=design.security.imds_tokens,
                encrypt_root=design.security.encrypt_root_volumes, join_timeout_s=design.resume_timeout_s),
                controller, self,
                baked.boot if baked is not None else None)
            self.pools.append(made)
            self.nodes += made.nodes
            built = next((n for n in self.nodes if n.name == design.controller), None)
            if controller.address is None and built is not None:
                self.controller = built
                controller = Controller(design.controller, built.instance.private_ip)
        self.register_outputs({"image_id": self.image_id,
                               "controller_ip": self.controller.instance.private_ip})
