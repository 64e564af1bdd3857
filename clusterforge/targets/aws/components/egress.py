"""How private nodes reach AWS and, optionally, the internet.

VPC endpoints always: the S3 gateway endpoint (free; datasets and checkpoints never pass a NAT, which bills
per GB) and interface endpoints for SSM, so Session Manager works with no internet path at all. A NAT
gateway is opt-in (`natGateway: true`) for nodes that install packages from the internet.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

GATEWAY_SERVICES = ("s3",)
INTERFACE_SERVICES = ("ssm", "ssmmessages", "ec2messages")  # Session Manager (AWS Systems Manager docs)
ANYWHERE = "0.0.0.0/0"


def service_name(region: str, service: str) -> str:
    return f"com.amazonaws.{region}.{service}"


def endpoints(name: str, region: str, vpc_id: pulumi.Input[str], route_table_id: pulumi.Input[str],
              subnet_ids: Sequence[pulumi.Input[str]], security_group_id: pulumi.Input[str],
              opts: pulumi.ResourceOptions) -> list[aws.ec2.VpcEndpoint]:
    out = [aws.ec2.VpcEndpoint(f"{name}-{service}-endpoint", vpc_id=vpc_id,
                               service_name=service_name(region, service), vpc_endpoint_type="Gateway",
                               route_table_ids=[route_table_id], opts=opts) for service in GATEWAY_SERVICES]
    out += [aws.ec2.VpcEndpoint(f"{name}-{service}-endpoint", vpc_id=vpc_id,
                                service_name=service_name(region, service), vpc_endpoint_type="Interface",
                                subnet_ids=list(subnet_ids), security_group_ids=[security_group_id],
                                private_dns_enabled=True, opts=opts) for service in INTERFACE_SERVICES]
    return out


def nat_gateway(name: str, cluster: str, vpc_id: pulumi.Input[str], cidr: str, zone: str,
                private_route_table_id: pulumi.Input[str], opts: pulumi.ResourceOptions) -> aws.ec2.NatGateway:
    """A public subnet holding only the NAT gateway; nothing in it accepts connections from the internet."""
    igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc_id, tags={"Name": cluster}, opts=opts)
    public = aws.ec2.Subnet(f"{name}-public-subnet", vpc_id=vpc_id, cidr_block=cidr, availability_zone_id=zone,
                            map_public_ip_on_launch=False, tags={"Name": f"{cluster}-public"}, opts=opts)
    table = aws.ec2.RouteTable(f"{name}-public-rt", vpc_id=vpc_id, tags={"Name": f"{cluster}-public"}, opts=opts)
    aws.ec2.Route(f"{name}-public-default", route_table_id=table.id, destination_cidr_block=ANYWHERE,
                  gateway_id=igw.id, opts=opts)
    aws.ec2.RouteTableAssociation(f"{name}-public-rta", subnet_id=public.id, route_table_id=table.id, opts=opts)
    address = aws.ec2.Eip(f"{name}-nat-eip", domain="vpc", tags={"Name": f"{cluster}-nat"}, opts=opts)
    nat = aws.ec2.NatGateway(f"{name}-nat", allocation_id=address.id, subnet_id=public.id,
                             tags={"Name": cluster}, opts=pulumi.ResourceOptions.merge(
                                 opts, pulumi.ResourceOptions(depends_on=[igw])))
    aws.ec2.Route(f"{name}-private-default", route_table_id=private_route_table_id,
                  destination_cidr_block=ANYWHERE, nat_gateway_id=nat.id, opts=opts)
    return nat
