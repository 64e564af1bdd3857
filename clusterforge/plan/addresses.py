"""The address plan: every on-prem node's address on the provisioning network, and its BMC's on the management
network, allocated from the blueprint alone (`site.networks`), so no one types 12,500 addresses.

The rule: after the network's `reserved` host addresses (the site's own: gateway, provisioning servers, switches),
each pool of the site takes a block in blueprint order, the next power of two at or above its nodes (max_count's,
and every tray of a rack-scale device), at least 16. Node N of a pool is the block's N-th address; its BMC is the
N-th address of the same block on the management network. So a node keeps its address when a pool grows within its
block (set max_count to say how far it may grow), when a pool is added at the end, and from one render to the next;
the gate (NET-009) says when the blocks do not fit, overlap or cover the gateway. Why blocks and not one counter:
a counter moves every later pool's nodes when one pool grows by a single node.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from clusterforge.catalog import Catalog
from clusterforge.model import Cluster
from clusterforge.model.networks import SiteNetwork, SiteNetworks
from clusterforge.plan.topology import hosts_per_device
from clusterforge.target_kernel import pool_target

MIN_BLOCK = 16


def block_size(nodes: int) -> int:
    """A pool's block: the next power of two at or above its nodes, at least MIN_BLOCK."""
    return max(MIN_BLOCK, 1 << max(nodes - 1, 0).bit_length())


@dataclass(frozen=True)
class Block:
    """A pool's addresses: `nodes` of them from host index `first` (1 is the network's first host address)."""

    pool: str
    nodes: int
    first: int
    size: int


@dataclass(frozen=True)
class NetworkPlan:
    """One network's blocks; `needed` the host addresses they and the reserved ones take."""

    network: ipaddress.IPv4Network
    gateway: ipaddress.IPv4Address | None
    reserved: int
    blocks: tuple[Block, ...]

    @property
    def needed(self) -> int:
        last = self.blocks[-1] if self.blocks else None
        return last.first + last.size - 1 if last else self.reserved

    @property
    def hosts(self) -> int:
        """The network's host addresses (all but the network and broadcast addresses)."""
        return max(self.network.num_addresses - 2, 0)

    @property
    def fits(self) -> bool:
        return self.needed <= self.hosts

    @cached_property
    def by_pool(self) -> dict[str, Block]:
        """Each pool's block, by the pool's name (looked up once per node at 12,500 nodes)."""
        return {block.pool: block for block in self.blocks}

    def address(self, pool: str, number: int) -> ipaddress.IPv4Address:
        """Node `number` (1-based) of `pool`."""
        block = self.by_pool[pool]
        if not 1 <= number <= block.size:
            raise ValueError(f"node {number} is outside pool {pool}'s block of {block.size}")
        return self.network.network_address + block.first + number - 1


@dataclass(frozen=True)
class AddressPlan:
    provisioning: NetworkPlan
    management: NetworkPlan | None

    @property
    def fits(self) -> bool:
        return self.provisioning.fits and (self.management is None or self.management.fits)


def site_pools(cluster: Cluster, catalog: Catalog) -> list[tuple[str, int]]:
    """Each pool the site holds (its target has a facility), with its nodes: max_count's, every tray of a
    rack-scale device."""
    return [(pool.name, pool.ceiling * hosts_per_device(catalog.get(pool.hardware))) for pool in cluster.pools
            if pool_target(cluster, pool).facility]


def _blocks(reserved: int, pools: Sequence[tuple[str, int]]) -> Iterator[Block]:
    first = reserved + 1
    for name, nodes in pools:
        size = block_size(nodes)
        yield Block(name, nodes, first, size)
        first += size


def network_plan(network: SiteNetwork, pools: Sequence[tuple[str, int]]) -> NetworkPlan:
    gateway = ipaddress.IPv4Address(network.gateway) if network.gateway else None
    return NetworkPlan(ipaddress.IPv4Network(network.cidr), gateway, network.reserved,
                       tuple(_blocks(network.reserved, pools)))


def address_plan(networks: SiteNetworks, pools: Sequence[tuple[str, int]]) -> AddressPlan:
    """The plan of both networks for these (pool, nodes), in blueprint order."""
    management = network_plan(networks.management, pools) if networks.management else None
    return AddressPlan(network_plan(networks.provisioning, pools), management)


def cluster_addresses(cluster: Cluster, catalog: Catalog) -> AddressPlan | None:
    """The cluster's address plan, or None where its site gives no networks."""
    site = cluster.site
    if site is None or site.networks is None:
        return None
    return address_plan(site.networks, site_pools(cluster, catalog))
