"""The nodes of a lab's power-saved pools (a `max_count` on `target: lab`, or on servers with `bmc: redfish`): SLURM
starts them on demand through the power-save programs and the lab's power agent (through the lab's BMC emulator
for the servers), so no `lab up` starts them and no inventory lists them.

Each still gets a fixed address now, after the always-on nodes', so every node's /etc/hosts names it (the boot
dir's nodes.yml) and a node started again comes back where it was, as a cloud instance keeps its name and gets
its address from the subnet. The lab's state keeps them (`LabState.launched`): what the agent is allowed to start,
a node of that list with its groups and address; a request for any other name is refused.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.nodes import FIRST_HOST, NodeSpec
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.render import inventory_groups
from clusterforge.powersave import config as powersave_config
from clusterforge.powersave.agent import MOUNT
from clusterforge.render.inventory import pool_group
from clusterforge.render.powersave_file import FILE
from clusterforge.render.yamlout import load

# The power-save providers whose nodes the lab starts (the file names the target): target lab's, which asks the
# lab's agent over its socket, and target onprem's, which powers servers through their BMCs, in the lab the BMC
# emulator in front of the containers (lab/bmc_service.py). An EC2 pool of a hybrid blueprint is not the lab's.
PROVIDER = "lab"
BY_BMC = "onprem"


def power_save_config(rendered: Path) -> powersave_config.PowerSaveConfig | None:
    """The render's power-save file when the lab starts its nodes, else None."""
    path = rendered / FILE
    if not path.is_file():
        return None
    found = powersave_config.load(path)
    return found if found.provider in (PROVIDER, BY_BMC) else None


def by_bmc(rendered: Path) -> bool:
    """The lab's power-saved nodes are servers powered through their BMCs (pools with `bmc: redfish`)."""
    found = power_save_config(rendered)
    return found is not None and found.provider == BY_BMC


def _with_hosts(tree: dict[str, Any], group: str, hosts: list[str]) -> bool:
    """Put `hosts` into every occurrence of `group` in a parsed hosts.yml; whether it was found."""
    found = False
    for name, body in list((tree.get("children") or {}).items()):
        body = body if isinstance(body, dict) else {}
        tree["children"][name] = body
        if name == group:
            body["hosts"] = {host: {} for host in hosts}
            found = True
        found = _with_hosts(body, group, hosts) or found
    return found


def specs(rendered: Path, subnet: ipaddress.IPv4Network, after: int,
          planned: Mapping[str, str] | None = None) -> list[NodeSpec]:
    """One spec per node of the lab's power-saved pools, in the render's groups, addressed after the `after`
    always-on nodes (or as the address plan says, `planned`)."""
    cfg = power_save_config(rendered)
    if cfg is None:
        return []
    inventory = load((rendered / "inventory/hosts.yml").read_text(encoding="utf-8")) or {}
    tree = copy.deepcopy(inventory.get("all") or {})
    names: list[str] = []
    for group in cfg.groups:
        members = sorted(group.members)
        if not _with_hosts(tree, pool_group(group.name), members):
            raise ClusterforgeError(Problem(f"the rendered inventory has no group {pool_group(group.name)}",
                                            str(rendered / "inventory/hosts.yml")))
        names += members
    groups = inventory_groups({"all": tree})
    capacity = subnet.num_addresses - FIRST_HOST - 1 - after
    if len(names) > capacity:
        raise ClusterforgeError(Problem(f"{after} nodes and {len(names)} power-saved ones do not fit in {subnet}",
                                        str(rendered / FILE), hint=f"at most {capacity} power-saved nodes"))
    return [NodeSpec(name, groups[name],
                     (planned or {}).get(name) or str(subnet.network_address + FIRST_HOST + after + index))
            for index, name in enumerate(names)]


def folder(paths: LabPaths) -> Path:
    """The agent's folder on this machine (its socket, pid and log), mounted into the controller."""
    return paths.root / "power"


def controller_mount(paths: LabPaths) -> list[str]:
    """What the controllers see of the agent's folder: the BMC document and login at the same path as here (the
    slurm role copies them from there, over SSH or on the node itself) where the nodes are powered through BMCs,
    else the folder (where the `lab` provider finds the agent's socket)."""
    bmcs = BmcFiles.of(paths)
    if bmcs.settings.is_file():
        return ["--volume", f"{bmcs.folder}:{bmcs.folder}:ro"]
    return ["--volume", f"{folder(paths)}:{MOUNT}"]
