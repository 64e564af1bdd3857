"""A pool's launch template: the EFA layout, IMDSv2, the encrypted root volume and capacity targeting; for a pool
slurmctld launches also its EC2 name, its user data and instance tags readable from the metadata service."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.crossguard.tokens import PLACEMENT_OPT_OUT_TAG
from clusterforge.targets.aws.design import CapacityTarget, PoolDesign
from clusterforge.targets.aws.efa import Interface
from clusterforge.targets.aws.layout import STANDARD

CAPACITY_BLOCK = "capacity-block"
ROOT_VOLUME_TYPE = "gp3"


def metadata(tokens: str, tags: bool = False) -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    """IMDSv2 only unless the blueprint overrides it (SEC-001 reports that); one hop keeps containers on a
    bridge network away from the node's credentials. `tags`: the instance reads its own tags (its node name)."""
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(http_endpoint="enabled", http_tokens=tokens,
                                                     http_put_response_hop_limit=1,
                                                     instance_metadata_tags="enabled" if tags else None)


@dataclass(frozen=True)
class TemplateArgs:
    cluster: str
    pool: PoolDesign
    image_id: pulumi.Input[str]
    root_device_name: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    security_group_ids: Sequence[pulumi.Input[str]]
    instance_profile_arn: pulumi.Input[str]
    placement_group: pulumi.Input[str] | None = None
    kms_key_arn: str | None = None
    imds_tokens: str = "required"
    encrypt_root: bool = True
    user_data: pulumi.Input[str] | None = None  # a pool slurmctld launches: one cloud-config for all its nodes
    join_timeout_s: int = 1800  # ResumeTimeout: how long such a node waits for its name tag (userdata_identify)


def network_interfaces(layout: Sequence[Interface], subnet_id: pulumi.Input[str],
                       security_group_ids: Sequence[pulumi.Input[str]]
                       ) -> list[aws.ec2.LaunchTemplateNetworkInterfaceArgs]:
    """One interface per card; a standard interface leaves `interface_type` unset."""
    return [aws.ec2.LaunchTemplateNetworkInterfaceArgs(
        network_card_index=nic.network_card_index, device_index=nic.device_index,
        interface_type=None if nic.interface_type == STANDARD else nic.interface_type,
        subnet_id=subnet_id, security_groups=list(security_group_ids), delete_on_termination="true")
        for nic in layout]


def capacity(target: CapacityTarget) -> dict[str, Any]:
    """Launch template arguments for the capacity type: nothing on demand; a `cr-` target for an ODCR; the
    same target plus the capacity-block market for a Capacity Block (bought outside Pulumi, never here)."""
    if target.kind == "on-demand" or target.reservation_id is None:
        return {}
    out: dict[str, Any] = {
        "capacity_reservation_specification": aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=(
                aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                    capacity_reservation_id=target.reservation_id)))}
    if target.kind == CAPACITY_BLOCK:
        out["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=CAPACITY_BLOCK)
    return out


def root_volume(device_name: pulumi.Input[str], gib: int, kms_key_arn: str | None, encrypted: bool = True
                ) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    """The AMI's own root device (a different name would add a second, empty volume), encrypted unless the
    blueprint turns it off (SEC-002 reports that)."""
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=device_name, ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=gib, volume_type=ROOT_VOLUME_TYPE, encrypted="true" if encrypted else "false",
            kms_key_id=kms_key_arn if encrypted else None, delete_on_termination="true"))


def _base64(text: str) -> str:
    """A launch template's user data is base64 (an instance's is not)."""
    return base64.b64encode(text.encode()).decode()


def launch_template(name: str, args: TemplateArgs, opts: pulumi.ResourceOptions) -> aws.ec2.LaunchTemplate:
    pool = args.pool
    tags = {"clusterforge:cluster": args.cluster, "clusterforge:pool": pool.name, "clusterforge:role": pool.role}
    if pool.placement_opt_out:
        tags[PLACEMENT_OPT_OUT_TAG] = "none"  # tells the CrossGuard NET-006 check the blueprint chose this
    launched = pool.launched_by_slurm
    kinds = ("instance", "volume", "network-interface") if launched else ("volume", "network-interface")
    return aws.ec2.LaunchTemplate(
        name, description=f"clusterforge {args.cluster} pool {pool.name} ({pool.instance_type})",
        name=pool.template_name if launched else None,
        user_data=pulumi.Output.from_input(args.user_data).apply(_base64) if args.user_data is not None else None,
        image_id=args.image_id, instance_type=pool.instance_type,
        iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=args.instance_profile_arn),
        network_interfaces=network_interfaces(pool.interfaces, args.subnet_id, args.security_group_ids),
        metadata_options=metadata(args.imds_tokens, tags=launched),
        block_device_mappings=[root_volume(args.root_device_name, pool.root_volume_gib, args.kms_key_arn,
                                           args.encrypt_root)],
        placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=args.placement_group)
        if args.placement_group is not None else None,
        tag_specifications=[aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                            for kind in kinds],
        update_default_version=True, tags=tags, **capacity(pool.capacity), opts=opts)
