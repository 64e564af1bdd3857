"""The site's own networks (`site.networks`): where its nodes boot and its BMCs answer, as CIDR blocks the address
plan allocates from (clusterforge/plan/addresses.py).

A blueprint already names every node; with these two blocks it also gives each node, and each node's BMC, an
address, so nothing is typed per node at 12,500 nodes. IPv4 only: network boot (DHCPv4, PXE, iPXE) is how the
anchors' provisioning services start a server, and each block is small enough to read (/8 or smaller).

    site:
      networks:
        provisioning: {cidr: 10.1.0.0/20, gateway: 10.1.0.1}   # the nodes' boot NIC: DHCP, network boot, SSH
        management: {cidr: 10.2.0.0/20, gateway: 10.2.0.1}     # the BMCs
"""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from clusterforge.core.validation import expected
from clusterforge.model.base import Strict

CIDR = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$"
ADDRESS = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}$"
SMALLEST_PREFIX = 8  # a /8 has 16.7 million addresses: more than any cluster; a larger block is a mistake


def _network(value: str) -> str:
    try:
        network = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not an IPv4 network: {exc}") from None
    if network.prefixlen < SMALLEST_PREFIX or network.prefixlen > 30:
        raise ValueError(f"a site network is /{SMALLEST_PREFIX} to /30, not /{network.prefixlen}")
    return str(network)


def _address(value: str) -> str:
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError as exc:
        raise ValueError(f"not an IPv4 address: {exc}") from None


NetworkCidr = Annotated[str, StringConstraints(pattern=CIDR), AfterValidator(_network), Field(description=expected(
    CIDR, "an IPv4 network with its host bits zero, /8 to /30, e.g. 10.1.0.0/20"))]
Address = Annotated[str, StringConstraints(pattern=ADDRESS), AfterValidator(_address), Field(description=expected(
    ADDRESS, "an IPv4 address, e.g. 10.1.0.1"))]


class SiteNetwork(Strict):
    """One block of the site's addresses. Its first `reserved` host addresses are the site's own (the gateway, the
    provisioning servers, switches, a DHCP pool for discovery); the pools take blocks after them, in blueprint
    order (docs/bare-metal.md, "The address plan")."""

    cidr: NetworkCidr
    gateway: Address | None = Field(None, description="the router of this network, among its reserved addresses")
    reserved: int = Field(16, ge=1, le=1_000_000, description=(
        "host addresses at the start of the network kept for the site itself; pools are allocated after them"))


class SiteNetworks(Strict):
    """`site.networks`: the provisioning network (each node's boot NIC) and the management network (its BMC)."""

    provisioning: SiteNetwork
    management: SiteNetwork | None = None
