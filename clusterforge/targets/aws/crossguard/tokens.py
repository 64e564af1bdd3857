"""Pulumi type tokens the CrossGuard pack reads (no Pulumi import: rule declarations and docs use these)."""

from __future__ import annotations

from clusterforge.policies.stack_policy import BLUEPRINT_POLICY as BLUEPRINT_POLICY  # the pack's stack policy

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
