"""Subnet CIDRs carved from the blueprint's VPC CIDR: deterministic, so a re-run never renumbers.

The first half of the VPC holds the private subnets, one slot per listed AZ (rounded up to a power of two;
adding AZs later renumbers them). The second half holds the small public subnet a NAT gateway needs.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from dataclasses import dataclass

from clusterforge.core.errors import ClusterforgeError, Problem

SMALLEST_SUBNET = 28  # AWS: a subnet is /16 to /28
PUBLIC_PREFIX = 24
# Addresses a subnet keeps for other than nodes: AWS reserves 5, FSx file servers and interface endpoints
# take ENIs of their own (a large PERSISTENT_2 file system uses dozens).
RESERVED_ADDRESSES = 64


@dataclass(frozen=True)
class Addressing:
    vpc: str
    private: dict[str, str]  # AZ id -> CIDR
    public: str


def plan_subnets(vpc_cidr: str, zones: Sequence[str]) -> Addressing:
    """Private subnets for `zones` (AZ ids, in blueprint order) and one public subnet."""
    vpc = ipaddress.ip_network(vpc_cidr, strict=False)
    if vpc.prefixlen > SMALLEST_SUBNET - 2:
        raise ClusterforgeError(Problem(f"vpc_cidr {vpc_cidr} is too small to split into subnets",
                                        path="aws.vpc_cidr", hint=f"use /{SMALLEST_SUBNET - 2} or larger"))
    private_half, public_half = vpc.subnets(new_prefix=vpc.prefixlen + 1)
    slots = 1 << math.ceil(math.log2(max(1, len(zones))))
    prefix = min(private_half.prefixlen + int(math.log2(slots)), SMALLEST_SUBNET)
    cidrs = [str(s) for s in private_half.subnets(new_prefix=prefix)][:len(zones)]
    if len(cidrs) < len(zones):
        raise ClusterforgeError(Problem(f"vpc_cidr {vpc_cidr} has no room for {len(zones)} AZ subnets",
                                        path="aws.vpc_cidr", hint="use a larger vpc_cidr"))
    private = dict(zip(zones, cidrs, strict=True))
    public = next(public_half.subnets(new_prefix=min(max(public_half.prefixlen, PUBLIC_PREFIX), SMALLEST_SUBNET)))
    return Addressing(str(vpc), private, str(public))


def check_room(cidr: str, nodes: int, zone: str) -> None:
    """Refuse a subnet that cannot hold its nodes plus the addresses FSx and endpoints need."""
    usable = ipaddress.ip_network(cidr).num_addresses - RESERVED_ADDRESSES
    if nodes > usable:
        raise ClusterforgeError(Problem(
            f"{nodes} nodes in {zone} do not fit subnet {cidr} ({usable} addresses after reserving "
            f"{RESERVED_ADDRESSES})", path="aws.vpc_cidr", hint="use a larger vpc_cidr"))
