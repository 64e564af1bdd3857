"""The wire protocol of a switched fabric: its kind, its switch and its nodes' NICs must speak the same one.

An InfiniBand switch does not forward Ethernet frames and an Ethernet switch has no subnet manager; a NIC that
only runs Ethernet cannot link to an InfiniBand port. Sizing rules (NET-001..NET-007) would pass such a fabric,
so this rule says it does not link at all.
"""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog import Switch
from clusterforge.catalog.models import LinkProtocol
from clusterforge.model import SwitchedFabric
from clusterforge.plan.topology import fabric_nics
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("network", "Network", 40)

# RoCE is RDMA over Converged Ethernet: an Ethernet fabric as far as switches and NIC ports go.
PROTOCOL_OF_KIND: dict[str, LinkProtocol] = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}
NAMES: dict[LinkProtocol, str] = {"infiniband": "InfiniBand", "ethernet": "Ethernet"}

SOURCES = ("switch user manuals (QM97XX and Q3200/Q3400: InfiniBand data interfaces; SN5000: Ethernet data "
           "interfaces); NVIDIA OFED introduction (ConnectX-7 VPI: InfiniBand or Ethernet); ConnectX-8 firmware "
           "release notes (XDR InfiniBand or 2 x 400GbE); AMD Pensando Pollara 400 product page (Ethernet)")


def _article(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"


@rule("NET-008", "error", DOMAIN, "Switch and NIC protocol", SOURCES, target="onprem",
      inputs=Inputs(("fabric.{kind,switch}", "pools[].{hardware,role}"), ("protocol", "nics")))
def link_protocol(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The fabric's switch speaks its kind (infiniband: an InfiniBand switch; roce and ethernet: an Ethernet
    switch), and every compute pool's fabric NICs can run it. NICs whose protocols the catalog does not record
    (a NIC model it does not know) are not judged; the switch always is, as every catalog switch states its
    protocol."""
    fabric = ctx.cluster.fabric
    if not isinstance(fabric, SwitchedFabric):
        return
    wanted = PROTOCOL_OF_KIND[fabric.kind]
    switch = ctx.catalog.get(fabric.switch)
    if isinstance(switch, Switch) and switch.protocol != wanted:
        yield Draft(("fabric", "switch"), f"{_article(fabric.kind)} {fabric.kind} fabric needs {_article(wanted)} "
                    f"{NAMES[wanted]} switch; {fabric.switch} is {_article(switch.protocol)} "
                    f"{NAMES[switch.protocol]} switch, so no link comes up",
                    f"choose {_article(wanted)} {NAMES[wanted]} switch from the catalog, or set fabric.kind to "
                    f"{'infiniband' if switch.protocol == 'infiniband' else 'roce or ethernet'}")
    for i, pool in enumerate(ctx.cluster.pools):
        server = ctx.server(pool)
        nics = server.node_nics if server else None
        if server is None or nics is None or nics.protocols is None or not fabric_nics(pool, server):
            continue
        if wanted not in nics.protocols:
            runs = " or ".join(NAMES[p] for p in nics.protocols)
            yield Draft(("pools", i, "hardware"), f"{pool.hardware}'s compute NICs run {runs} only; "
                        f"{_article(fabric.kind)} {fabric.kind} fabric needs {NAMES[wanted]} NICs",
                        f"use {_article(wanted)} {NAMES[wanted]} fabric for pool {pool.name}, or hardware with "
                        f"{NAMES[wanted]}-capable NICs")
