"""Network: a VPC, a private subnet per AZ the pools use (by AZ id), endpoints, and the security groups."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.addressing import Addressing
from clusterforge.targets.aws.components.egress import endpoints, nat_gateway
from clusterforge.targets.aws.components.security_groups import security_groups
from clusterforge.targets.aws.section import Ingress


@dataclass(frozen=True)
class NetworkArgs:
    cluster: str
    region: str
    addressing: Addressing
    nat_gateway: bool = False
    ingress: tuple[Ingress, ...] = ()


class Network(pulumi.ComponentResource):
    """Private by design: no public IPs on nodes and no ingress from outside the VPC."""

    vpc_id: pulumi.Output[str]
    subnet_ids: dict[str, pulumi.Output[str]]  # AZ id -> private subnet
    cluster_security_group_id: pulumi.Output[str]
    lustre_security_group_id: pulumi.Output[str]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        vpc = aws.ec2.Vpc(f"{name}-vpc", cidr_block=args.addressing.vpc, enable_dns_support=True,
                          enable_dns_hostnames=True, tags={"Name": args.cluster}, opts=child)
        table = aws.ec2.RouteTable(f"{name}-private-rt", vpc_id=vpc.id, tags={"Name": f"{args.cluster}-private"},
                                   opts=child)
        subnets: dict[str, aws.ec2.Subnet] = {}
        for zone, cidr in args.addressing.private.items():
            subnets[zone] = aws.ec2.Subnet(f"{name}-private-{zone}", vpc_id=vpc.id, cidr_block=cidr,
                                           availability_zone_id=zone, map_public_ip_on_launch=False,
                                           tags={"Name": f"{args.cluster}-private-{zone}"}, opts=child)
            aws.ec2.RouteTableAssociation(f"{name}-private-{zone}-rta", subnet_id=subnets[zone].id,
                                          route_table_id=table.id, opts=child)
        groups = security_groups(name, args.cluster, vpc.id, child, args.ingress)
        endpoints(name, args.region, vpc.id, table.id, [s.id for s in subnets.values()], groups.endpoints.id,
                  child)
        if args.nat_gateway:
            nat_gateway(name, args.cluster, vpc.id, args.addressing.public, next(iter(subnets)), table.id, child)
        self.vpc_id = vpc.id
        self.subnet_ids = {zone: subnet.id for zone, subnet in subnets.items()}
        self.cluster_security_group_id = groups.cluster.id
        self.lustre_security_group_id = groups.lustre.id
        self.register_outputs({"vpc_id": self.vpc_id, "subnet_ids": self.subnet_ids,
                               "cluster_security_group_id": self.cluster_security_group_id,
                               "lustre_security_group_id": self.lustre_security_group_id})
