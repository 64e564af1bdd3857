"""What each server's BMC says of its network interfaces (`clusterforge power inventory`), and the file that
carries it to `render --macs`: the MAC each node boots from, bound to its address in the DHCP reservations.

The anchors read MACs from the hardware rather than from people: Ironic inspects a node's NICs through its BMC,
xCAT and Warewulf record them at a node's first boot. Here a protocol that can list a server's interfaces does
(Redfish's `EthernetInterfaces`; a protocol module's optional `nics`), for every node at once through the fleet's
bounded threads, and writes one YAML document:

    # clusterforge power inventory: each node's network interfaces as its BMC lists them; the first boots
    macs:
      gpu-0001: ['52:54:00:00:01:01', '52:54:00:00:01:02']

The first MAC of a node is the one its reservation binds (reorder a node's list to boot from another NIC). The file
is untrusted input when render reads it back: every node one of the blueprint's, every MAC six hex pairs, none on
two nodes, each mistake at its line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from clusterforge.bmc import fleet, protocols
from clusterforge.bmc.credentials import Logins
from clusterforge.bmc.hosts import MAX_BMCS, NODE
from clusterforge.bmc.interface import BmcFailure, NodeBmc
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.validation import expected, validate
from clusterforge.files.yamlsource import load_file

MAC = r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"
MAX_NICS_PER_NODE = 64
HEADER = ("# clusterforge power inventory: each node's network interfaces as its BMC lists them; the first is the "
          "one its DHCP reservation binds (render --macs)\n")


@dataclass
class Inventory:
    nics: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # node -> reason


def read(bmcs: Sequence[NodeBmc], logins: Logins, concurrency: int = fleet.DEFAULT_CONCURRENCY,
         attempts: int = fleet.DEFAULT_ATTEMPTS, timeout_s: float = 20.0,
         progress: Callable[[str], None] | None = None) -> Inventory:
    """Every node's interfaces through its BMC, `concurrency` at once, a reason for each node that gave none."""
    result = Inventory()
    work: dict[str, Callable[[], list[str]]] = {}
    for bmc in bmcs:
        lister = protocols.nics_of(bmc.protocol)
        login = logins.for_node(bmc.node)
        if lister is None:
            result.failed[bmc.node] = f"{bmc.protocol} does not list a server's network interfaces"
        elif login is None:
            result.failed[bmc.node] = "no login for this node in the credentials file"
        else:
            work[bmc.node] = partial(lister, bmc, login, timeout_s)
    pool = ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(work) or 1)))
    try:
        for node, answer in fleet.rounds(pool, work, attempts):
            if isinstance(answer, BmcFailure):
                result.failed[node] = answer.reason
            elif not answer:
                result.failed[node] = "the BMC lists no network interface with a MAC address"
            else:
                result.nics[node] = [mac.lower() for mac in answer]
            if progress is not None:
                progress(node)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return result


def document(inventory: Inventory) -> str:
    """The inventory as the file `render --macs` reads (the nodes that answered, in name order)."""
    lines = [HEADER, "macs:\n"] if inventory.nics else [HEADER, "macs: {}\n"]
    # quoted: YAML 1.1 reads an unquoted 52:54:00:00:01:01 as a base-60 integer
    lines += [f"  {node}: [{', '.join(repr(mac) for mac in macs)}]\n" for node, macs in sorted(inventory.nics.items())]
    return "".join(lines)


Mac = Annotated[str, Field(pattern=MAC, description=expected(
    MAC, "a MAC address, six hex pairs in quotes (YAML reads 52:54:00:12:34:56 unquoted as a number)"))]


class _MacsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # a node as the BMC document names one, and as many as it may hold
    macs: dict[Annotated[str, Field(pattern=NODE)],
               Annotated[list[Mac], Field(min_length=1, max_length=MAX_NICS_PER_NODE)]] = Field(max_length=MAX_BMCS)


def boot_macs(path: Path, nodes: set[str]) -> dict[str, str]:
    """Each node's boot MAC (its first) from a `power inventory` file, checked against the blueprint's `nodes`."""
    source = load_file(path)
    parsed = validate(_MacsFile, source)
    problems: list[Problem] = []
    owner: dict[str, str] = {}
    for node, macs in parsed.macs.items():
        if node not in nodes:
            problems.append(source.problem(("macs", node), f"{node} is not a node of the blueprint",
                                           hint="delete its line, or render the blueprint that names it"))
        for index, mac in enumerate(macs):
            mac = mac.lower()
            if mac in owner and owner[mac] != node:
                problems.append(source.problem(("macs", node, index), f"{mac} is {owner[mac]}'s too: two servers "
                                               "cannot share a NIC", hint="read the inventory again"))
            owner.setdefault(mac, node)
    if problems:
        raise ClusterforgeError(problems[:20])
    return {node: macs[0].lower() for node, macs in parsed.macs.items()}


