"""Pulumi type tokens the CrossGuard pack reads, and which rule runs on which (no Pulumi import: docs use this)."""

from __future__ import annotations

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS_RULE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
LEGACY_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
INSTANCE = "aws:ec2/instance:Instance"

PLACEMENT_OPT_OUT_TAG = "clusterforge:placement"  # "none" on a launch template whose pool opted out on purpose

PACK_NAME = "clusterforge"
BLUEPRINT_POLICY = "clusterforge-blueprint"

COVERAGE: dict[str, tuple[str, ...]] = {
    "NET-005": (LAUNCH_TEMPLATE,),
    "NET-006": (PLACEMENT_GROUP, SECURITY_GROUP, INGRESS_RULE, EGRESS_RULE, LEGACY_RULE, AUTOSCALING_GROUP,
                INSTANCE, LAUNCH_TEMPLATE),
    "STO-001": (LUSTRE,),
    "STO-002": (LUSTRE,),
}
"""Rule id → the resource types its CrossGuard policy reads (NET-006 is a stack policy over all of them)."""
