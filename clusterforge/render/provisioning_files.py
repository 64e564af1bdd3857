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

from collections.abc import Iterator

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.plan.addresses import AddressPlan, cluster_addresses
from clusterforge.plan.model import PoolNodes
from clusterforge.render.change_effects import Action, Effect
from clusterforge.render.context import RenderContext
from clusterforge.render.manifest import WholeFile
from clusterforge.target_kernel import pool_target, render_part

FOLDER = "provisioning"
DAY_TWO = {f"{FOLDER}/*": WholeFile((Effect(Action.NONE, "none", "the provisioning service reads it again; a node "
                                            "gets a changed address at its next network boot"),))}
SCHEMES = {"redfish": "https", "ipmi": "ipmi"}  # the BMC document's URL scheme of each protocol


def _nodes(ctx: RenderContext, plan: AddressPlan) -> Iterator[tuple[PoolNodes, int, str]]:
    """(pool, number, name) of every node the plan addresses, in pool order."""
    planned = {block.pool for block in plan.provisioning.blocks}
    for pool in ctx.plan.nodes:
        if pool.pool in planned:
            for number in range(1, pool.count + 1):
                yield pool, number, pool.name(number)


def _protocols(ctx: RenderContext) -> dict[str, str]:
    """Each pool's BMC protocol, where its target names one."""
    found = {}
    for pool in ctx.cluster.pools:
        protocol = render_part(pool_target(ctx.cluster, pool)).bmc_protocol(pool)
        if protocol is not None:
            found[pool.name] = protocol
    return found


def _nodes_conf(ctx: RenderContext, plan: AddressPlan, protocols: dict[str, str]) -> str:
    net = plan.provisioning
    lines = [ctx.header(), "nodeprofiles:\n"]
    for pool in ctx.plan.nodes:
        if any(b.pool == pool.pool for b in net.blocks):
            lines += [f"  clusterforge-{pool.pool}:\n", f"    comment: pool {pool.pool} ({pool.hardware})\n",
                      "    network devices:\n", "      default:\n", f"        netmask: {net.network.netmask}\n"]
            lines += [f"        gateway: {net.gateway}\n"] if net.gateway else []
    lines.append("nodes:\n")
    management = plan.management
    for pool, number, name in _nodes(ctx, plan):
        lines += [f"  {name}:\n", f"    profiles: [default, clusterforge-{pool.pool}]\n", "    network devices:\n",
                  "      default:\n", f"        ipaddr: {net.address(pool.pool, number)}\n"]
        if name in ctx.macs:
            lines.append(f"        hwaddr: \"{ctx.macs[name]}\"\n")
        if management is not None and protocols.get(pool.pool) == "ipmi":
            lines += ["    ipmi:\n", f"      ipaddr: {management.address(pool.pool, number)}\n"]
    return "".join(lines)


def render(ctx: RenderContext) -> dict[str, str]:
    plan = cluster_addresses(ctx.cluster, ctx.loaded.catalog)
    if plan is None:
        return {}
    if not plan.fits:
        file, line = ctx.loaded.source.locate(("site", "networks"))
        raise ClusterforgeError(Problem("the site's networks are too small for the pools' address blocks", file,
                                        line, "site.networks", hint="see NET-009 in `clusterforge check`"))
    hosts, addresses, dhcp, unknown, bmcs = [ctx.header()], [ctx.header()], [], [], []
    protocols = _protocols(ctx)
    management = plan.management
    for pool, number, name in _nodes(ctx, plan):
        address = plan.provisioning.address(pool.pool, number)
        hosts.append(f"{address} {name}\n")
        addresses.append(f"{name} {address}\n")
        if name in ctx.macs:
            dhcp.append(f"{ctx.macs[name]},{address},{name}\n")
        else:
            unknown.append(name)
        if management is not None:
            bmc = management.address(pool.pool, number)
            hosts.append(f"{bmc} {name}-bmc\n")
            if pool.pool in protocols:
                protocol = protocols[pool.pool]
                bmcs.append(f"  {name}: {{url: \"{SCHEMES.get(protocol, 'https')}://{bmc}\", protocol: {protocol}}}\n")
    files = {f"{FOLDER}/hosts": "".join(hosts), f"{FOLDER}/addresses.txt": "".join(addresses),
             f"{FOLDER}/dhcp-hosts": _dhcp(ctx, dhcp, unknown),
             f"{FOLDER}/nodes.conf": _nodes_conf(ctx, plan, protocols)}
    if bmcs:
        files[f"{FOLDER}/bmcs.yaml"] = ctx.header() + "bmcs:\n" + "".join(bmcs)
    return files


def _dhcp(ctx: RenderContext, reservations: list[str], unknown: list[str]) -> str:
    from clusterforge.core.hostlist import compress

    note = (f"# no MAC known for {len(unknown):,} node(s), no reservation: {compress(unknown)} (clusterforge power "
            "inventory, then render --macs)\n") if unknown else ""
    return ctx.header() + note + "".join(reservations)



