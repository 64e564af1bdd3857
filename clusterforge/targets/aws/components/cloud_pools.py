"""A hybrid's compute (docs/hybrid.md): the cloud pools of an on-prem cluster, and no controller.

The same node role, image and pool templates as components/compute.py builds for an all-AWS cluster, under the
same names (`compute-<pool>-lt`, `compute-image-<key>`), so the power-save file's launch template names hold for
both. What differs: the controller stays on premises, so no controller instance or instance profile is made; its
credentials are an IAM user with the controller role's policies (components/onprem_controller.py), and the
nodes find it at the address the stack config gives (`controllerAddress`), else by name (DNS across the link).
"""

from __future__ import annotations

import json

import pulumi

from clusterforge.targets.aws.components.compute import ComputeArgs, image, node_role_args, root_device
from clusterforge.targets.aws.components.identity import NodeRole
from clusterforge.targets.aws.components.image import NodeImage, NodeImageArgs
from clusterforge.targets.aws.components.launch_template import TemplateArgs
from clusterforge.targets.aws.components.onprem_controller import ControllerUser, ControllerUserArgs
from clusterforge.targets.aws.components.pool import Controller, Node, PoolTemplate, node_pool
from clusterforge.targets.aws.policy_documents import power_save_access


class CloudPools(pulumi.ComponentResource):
    nodes: list[Node]  # instances of cloud pools slurmctld does not launch (a login pool in the Region)
    pools: list[PoolTemplate]
    image_id: pulumi.Output[str]
    controller_user: ControllerUser

    def __init__(self, name: str, args: ComputeArgs, controller_address: str | None = None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:CloudPools", name, None, opts)
        design = args.design
        child = pulumi.ResourceOptions(parent=self)
        base = image(design, args.ami_parameter, self)
        device = root_device(base, self)
        baked = None
        if args.node_config is not None:
            baked = NodeImage(f"{name}-image", NodeImageArgs(
                design, args.node_config, base, args.subnet_ids[design.lustre_zone], args.security_group_id,
                args.image_instance_type, args.kms_key_arn, args.egress), child)
        role = NodeRole(f"{name}-nodes", node_role_args(args, baked), child)
        power_save = role.role_arn.apply(lambda arn: json.dumps(power_save_access(design.region, design.name, arn)))
        self.controller_user = ControllerUser(f"{name}-controller", ControllerUserArgs(
            design.name, power_save, baked.controller_policy if baked is not None else None), child)
        # where the launch batches' instance -> node maps go (targets/aws/powersave.NodeMap): the controller's
        # resume program is told it through CLUSTERFORGE_BOOT_BUCKET, as the stack's user data tells an AWS one
        self.boot_bucket = baked.boot.apply(lambda b: b.bucket) if baked is not None else None
        images = {pool.name: baked.ami_for(pool.name) if baked is not None else base for pool in design.pools}
        main = next((p for p in design.pools if p.role == "compute"), design.pools[0])
        self.image_id = images[main.name]
        address = pulumi.Output.from_input(controller_address) if controller_address is not None else None
        controller = Controller(design.controller, address)
        self.nodes, self.pools = [], []
        for pool in design.pools:
            made = node_pool(name, TemplateArgs(
                design.name, pool, images[pool.name], device, args.subnet_ids[pool.zone], [args.security_group_id],
                role.instance_profile_arn, kms_key_arn=args.kms_key_arn, imds_tokens=design.security.imds_tokens,
                encrypt_root=design.security.encrypt_root_volumes, join_timeout_s=design.resume_timeout_s),
                controller, self, baked.boot if baked is not None else None)
            self.pools.append(made)
            self.nodes += made.nodes
        self.register_outputs({"image_id": self.image_id, "controller_user": self.controller_user.user_name})
