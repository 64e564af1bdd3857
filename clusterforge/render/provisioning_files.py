"""provisioning/: what the provisioning side reads, from the site's address plan (clusterforge/plan/addresses.py)
and each node's boot MAC (`render --macs`, written by `clusterforge power inventory`). Written only when the
blueprint's `site.networks` gives the networks.

- `hosts`: every node's provisioning address, and its BMC's as `<node>-bmc`, in /etc/hosts form;
- `addresses.txt`: `NAME ADDRESS` lines, what `clusterforge inventory --addresses` turns into Ansible's hosts;
- `dhcp-hosts`: dnsmasq's `--dhcp-hostsfile` (`MAC,ADDRESS,NAME` a line, dnsmasq(8) `dhcp-host`), one
  reservation per node whose MAC is known; a node without one is listed in the file's comment;
- `bmcs.yaml`: the BMC document (`clusterforge power --bmcs`) for the pools whose target names their BMCs'
  protocol, each BMC at its management address;
- `nodes.conf`: Warewulf 4.6's node database (internal/pkg/node/datastructure.go: `nodeprofiles`, `nodes`, each
  node's `network devices` with `ipaddr`, `netmask`, `gateway`, `hwaddr`, and `ipmi: {ipaddr}` for an IPMI BMC),
  so a site that runs Warewulf adds no node by hand; a profile per pool, which the site's own profile completes
  (image, kernel, overlays).

A node keeps its address from one render to the next (the plan's blocks), so changing these files on day two takes
nothing on running nodes: the provisioning service reads them again, and a node gets a changed address at its
next network boot.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from clusterforge.bmc import protocols
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.hostlist import compress
from clusterforge.plan.addresses import AddressPlan, cluster_addresses
from clusterforge.render.change_effects import Action, Effect
from clusterforge.render.context import RenderContext
from clusterforge.render.manifest import WholeFile
from clusterforge.target_kernel import pool_target, render_part

FOLDER = "provisioning"
DAY_TWO = {f"{FOLDER}/*": WholeFile((Effect(Action.NONE, "none", "the provisioning service reads it again; a node "
                                            "gets a changed address at its next network boot"),))}


@dataclass(frozen=True)
class Addressed:
    """One node of the plan with its addresses, its boot MAC where known and its BMC's protocol."""

    pool: str
    name: str
    address: ipaddress.IPv4Address
    bmc: ipaddress.IPv4Address | None
    mac: str | None
    protocol: str | None


def _addressed(ctx: RenderContext, plan: AddressPlan) -> list[Addressed]:
    """Every node the plan addresses, in pool order, each address computed once."""
    protocols = {pool.name: protocol for pool in ctx.cluster.pools
                 if (protocol := render_part(pool_target(ctx.cluster, pool)).bmc_protocol(pool)) is not None}
    management = plan.management
    return [Addressed(pool.pool, pool.name(number), plan.provisioning.address(pool.pool, number),
                      management.address(pool.pool, number) if management is not None else None,
                      ctx.macs.get(pool.name(number)), protocols.get(pool.pool))
            for pool in ctx.plan.nodes if pool.pool in plan.provisioning.by_pool
            for number in range(1, pool.count + 1)]


def _nodes_conf(ctx: RenderContext, plan: AddressPlan, nodes: list[Addressed]) -> str:
    net = plan.provisioning
    lines = [ctx.header(), "nodeprofiles:\n"]
    for pool in ctx.plan.nodes:
        if pool.pool in net.by_pool:
            lines += [f"  clusterforge-{pool.pool}:\n", f"    comment: pool {pool.pool} ({pool.hardware})\n",
                      "    network devices:\n", "      default:\n", f"        netmask: {net.network.netmask}\n"]
            lines += [f"        gateway: {net.gateway}\n"] if net.gateway else []
    lines.append("nodes:\n")
    for node in nodes:
        lines += [f"  {node.name}:\n", f"    profiles: [default, clusterforge-{node.pool}]\n",
                  "    network devices:\n", "      default:\n", f"        ipaddr: {node.address}\n"]
        if node.mac is not None:
            lines.append(f"        hwaddr: \"{node.mac}\"\n")
        if node.bmc is not None and node.protocol == "ipmi":
            lines += ["    ipmi:\n", f"      ipaddr: {node.bmc}\n"]
    return "".join(lines)


def _bmc_url(protocol: str, address: ipaddress.IPv4Address) -> str:
    """The BMC document's URL of a BMC in one of its protocol's schemes: https where the protocol has it (the login
    never crosses the network in clear text), else its only one (ipmi)."""
    schemes = protocols.scheme_of(protocol)
    return f"{'https' if 'https' in schemes else next(iter(schemes))}://{address}"


def render(ctx: RenderContext) -> dict[str, str]:
    plan = cluster_addresses(ctx.cluster, ctx.loaded.catalog)
    if plan is None:
        return {}
    if not plan.fits:
        file, line = ctx.loaded.source.locate(("site", "networks"))
        raise ClusterforgeError(Problem("the site's networks are too small for the pools' address blocks", file,
                                        line, "site.networks", hint="see NET-009 in `clusterforge check`"))
    nodes = _addressed(ctx, plan)
    hosts = [ctx.header()]
    for node in nodes:
        hosts.append(f"{node.address} {node.name}\n")
        if node.bmc is not None:
            hosts.append(f"{node.bmc} {node.name}-bmc\n")
    files = {f"{FOLDER}/hosts": "".join(hosts),
             f"{FOLDER}/addresses.txt": ctx.header() + "".join(f"{n.name} {n.address}\n" for n in nodes),
             f"{FOLDER}/dhcp-hosts": _dhcp(ctx, nodes),
             f"{FOLDER}/nodes.conf": _nodes_conf(ctx, plan, nodes)}
    bmcs = [f"  {n.name}: {{url: \"{_bmc_url(n.protocol, n.bmc)}\", protocol: {n.protocol}}}\n"
            for n in nodes if n.bmc is not None and n.protocol is not None]
    if bmcs:
        files[f"{FOLDER}/bmcs.yaml"] = ctx.header() + "bmcs:\n" + "".join(bmcs)
    return files


def _dhcp(ctx: RenderContext, nodes: list[Addressed]) -> str:
    unknown = [n.name for n in nodes if n.mac is None]
    note = (f"# no MAC known for {len(unknown):,} node(s), no reservation: {compress(unknown)} (clusterforge power "
            "inventory, then render --macs)\n") if unknown else ""
    return ctx.header() + note + "".join(f"{n.mac},{n.address},{n.name}\n" for n in nodes if n.mac is not None)
