"""The site's address plan (clusterforge/plan/addresses.py) fits its networks: every pool's block inside its
network, the two networks apart, the gateway among the reserved addresses. A render of a plan that does not fit
would hand out addresses that are not on the network, or twice."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.model.networks import SiteNetwork
from clusterforge.plan.addresses import NetworkPlan, cluster_addresses
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("network", "Network", 40)
SOURCES = ("RFC 950 and RFC 919 (a subnet's all-zeros and all-ones host addresses are not hosts'); dnsmasq(8) "
           "dhcp-host (one address per reservation)")


def _blocks(plan: NetworkPlan) -> str:
    shown = ", ".join(f"{b.pool} {b.size:,}" for b in plan.blocks[:4])
    return shown + (f" and {len(plan.blocks) - 4} more" if len(plan.blocks) > 4 else "")


def _network(name: str, given: SiteNetwork, plan: NetworkPlan) -> Iterator[Draft]:
    path = ("site", "networks", name)
    if not plan.fits:
        prefix = 32 - (plan.needed + 1).bit_length()
        yield Draft((*path, "cidr"), f"the {name} network {plan.network} has {plan.hosts:,} host addresses; its "
                    f"{plan.reserved:,} reserved and the pools' blocks ({_blocks(plan)}) need {plan.needed:,}",
                    f"use a /{prefix} or larger, or fewer reserved addresses", plan.needed, plan.hosts, "addresses")
    gateway = plan.gateway
    if gateway is not None:
        index = int(gateway) - int(plan.network.network_address)
        if gateway not in plan.network or index in (0, plan.network.num_addresses - 1):
            yield Draft((*path, "gateway"), f"gateway {gateway} is not a host address of {plan.network}",
                        f"give an address from {plan.network.network_address + 1} to "
                        f"{plan.network.network_address + given.reserved}")
        elif index > given.reserved:
            yield Draft((*path, "gateway"), f"gateway {gateway} is among the pools' addresses (after the "
                        f"{given.reserved} reserved ones): a node would get it too",
                        f"give an address from {plan.network.network_address + 1} to "
                        f"{plan.network.network_address + given.reserved}, or reserve more")


@rule("NET-009", "error", DOMAIN, "Site address plan", SOURCES, target="onprem",
      inputs=Inputs(("site.networks.provisioning.{cidr,gateway,reserved}",
                     "site.networks.management.{cidr,gateway,reserved}", "pools[].{count,max_count,hardware}"),
                    ("hosts",)))
def address_plan(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each network holds its reserved addresses and every pool's block (the next power of two at or above the
    pool's nodes, at least 16); the provisioning and management networks do not overlap; a gateway is a host
    address among the reserved ones."""
    site = ctx.cluster.site
    plan = cluster_addresses(ctx.cluster, ctx.catalog)
    if site is None or site.networks is None or plan is None:
        return
    networks = site.networks
    yield from _network("provisioning", networks.provisioning, plan.provisioning)
    if networks.management is not None and plan.management is not None:
        yield from _network("management", networks.management, plan.management)
        if plan.management.network.overlaps(plan.provisioning.network):
            yield Draft(("site", "networks", "management", "cidr"), f"the management network "
                        f"{plan.management.network} overlaps the provisioning network {plan.provisioning.network}",
                        "give the BMCs a block of their own: a BMC and a node would get one address")
