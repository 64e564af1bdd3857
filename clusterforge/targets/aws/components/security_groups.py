"""Security groups: the cluster group EFA needs, the Lustre group FSx needs, and the endpoint group.

No rule admits 0.0.0.0/0: nodes are reached through SSM Session Manager, never SSH from the internet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.section import Ingress

ALL = "-1"
ANYWHERE = "0.0.0.0/0"
# FSx for Lustre: LNet on TCP 988, and 1018-1023 (AWS FSx "File system access control with Amazon VPC").
LUSTRE_PORTS: tuple[tuple[int, int], ...] = ((988, 988), (1018, 1023))
HTTPS = 443


@dataclass(frozen=True)
class SecurityGroups:
    cluster: aws.ec2.SecurityGroup
    lustre: aws.ec2.SecurityGroup
    endpoints: aws.ec2.SecurityGroup


def _ingress(name: str, group: aws.ec2.SecurityGroup, source: aws.ec2.SecurityGroup, protocol: str,
             ports: tuple[int, int] | None, description: str, opts: pulumi.ResourceOptions) -> None:
    low, high = ports if ports is not None else (None, None)
    aws.vpc.SecurityGroupIngressRule(name, security_group_id=group.id, referenced_security_group_id=source.id,
                                     ip_protocol=protocol, from_port=low, to_port=high, description=description,
                                     opts=opts)


def _egress(name: str, group: aws.ec2.SecurityGroup, target: aws.ec2.SecurityGroup | None, description: str,
            opts: pulumi.ResourceOptions) -> None:
    if target is None:
        aws.vpc.SecurityGroupEgressRule(name, security_group_id=group.id, ip_protocol=ALL, cidr_ipv4=ANYWHERE,
                                        description=description, opts=opts)
    else:
        aws.vpc.SecurityGroupEgressRule(name, security_group_id=group.id, ip_protocol=ALL,
                                        referenced_security_group_id=target.id, description=description, opts=opts)


def security_groups(name: str, cluster: str, vpc_id: pulumi.Input[str], opts: pulumi.ResourceOptions,
                    ingress: Sequence[Ingress] = ()) -> SecurityGroups:
    """Create the three groups and their rules as separate rule resources (no inline rules to fight over)."""

    def group(role: str, description: str) -> aws.ec2.SecurityGroup:
        return aws.ec2.SecurityGroup(f"{name}-{role}-sg", vpc_id=vpc_id, description=description,
                                     tags={"Name": f"{cluster}-{role}"}, opts=opts)

    nodes = group("cluster", "clusterforge nodes: EFA needs all traffic to and from this group")
    lustre = group("lustre", "clusterforge FSx for Lustre: LNet from the nodes and between file servers")
    endpoints = group("endpoints", "clusterforge VPC interface endpoints: HTTPS from the nodes")

    _ingress(f"{name}-cluster-self-in", nodes, nodes, ALL, None, "EFA and cluster traffic from the nodes", opts)
    _egress(f"{name}-cluster-self-out", nodes, nodes, "EFA and cluster traffic to the nodes", opts)
    _egress(f"{name}-cluster-all-out", nodes, None, "AWS APIs through endpoints, and NAT when enabled", opts)
    for low, high in LUSTRE_PORTS:
        _ingress(f"{name}-lustre-from-cluster-{low}", lustre, nodes, "tcp", (low, high), "Lustre clients", opts)
        _ingress(f"{name}-lustre-self-{low}", lustre, lustre, "tcp", (low, high), "Lustre file servers", opts)
        _ingress(f"{name}-cluster-from-lustre-{low}", nodes, lustre, "tcp", (low, high), "Lustre servers", opts)
    for i, rule in enumerate(ingress):  # the blueprint's aws.security.ingress (SEC-003 refuses the internet)
        v6 = ":" in rule.cidr
        aws.vpc.SecurityGroupIngressRule(f"{name}-cluster-extra-in-{i}", security_group_id=nodes.id,
                                         ip_protocol=rule.protocol, from_port=rule.from_port, to_port=rule.to_port,
                                         cidr_ipv4=None if v6 else rule.cidr, cidr_ipv6=rule.cidr if v6 else None,
                                         description=rule.description or "from the blueprint", opts=opts)
    _egress(f"{name}-lustre-all-out", lustre, None, "Lustre servers to clients and to S3", opts)
    _ingress(f"{name}-endpoints-https", endpoints, nodes, "tcp", (HTTPS, HTTPS), "AWS APIs from the nodes", opts)
    return SecurityGroups(nodes, lustre, endpoints)
