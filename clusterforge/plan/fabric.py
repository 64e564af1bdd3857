"""Fat-tree sizing (Al-Fares et al., SIGCOMM 2008; NVIDIA DGX SuperPOD reference tables)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from clusterforge.catalog import Switch
from clusterforge.plan.model import FatTree


def leaf_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """(downlinks, uplinks) of a leaf: down:up = oversubscription:1 (1:1 gives k/2 each)."""
    down = math.floor(radix * oversubscription / (1 + oversubscription))
    down = max(1, min(radix - 1, down))
    return down, radix - down


def capacity(radix: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Most endpoints a fat tree of `tiers` tiers can carry: k, k²/2, k³/4 at 1:1."""
    down, _ = leaf_split(radix, oversubscription)
    if tiers == 1:
        return radix
    if tiers == 2:
        return down * radix
    return down * radix * (radix // 2)


def tiers_needed(endpoints: int, radix: int, oversubscription: float = 1.0) -> int:
    """Fewest tiers that carry `endpoints` (4 means more than three tiers can: too big for this radix)."""
    for tiers in (1, 2, 3):
        if endpoints <= capacity(radix, tiers, oversubscription):
            return tiers
    return 4


@dataclass(frozen=True)
class PortMode:
    """How the fabric uses its switches' ports: native, or split into twice as many at half the speed."""

    radix: int
    speed_gbps: int
    split: bool


def port_mode(switch: Switch, nic_gbps: int) -> PortMode:
    """Split ports when the fastest NIC runs no faster than the switch's split speed: the switch's capacity is
    constant, so a 64 × 800G switch used as 128 × 400G serves 400G NICs with twice the radix (k²/2 two-tier
    endpoints × 4). Otherwise native ports; a NIC faster than a native port is NET-007's error."""
    if switch.split_ports and switch.split_speed_gbps and 0 < nic_gbps <= switch.split_speed_gbps:
        return PortMode(switch.split_ports, switch.split_speed_gbps, True)
    return PortMode(switch.ports, switch.port_speed_gbps, False)


def size_fat_tree(
    endpoints: int, radix: int, oversubscription: float = 1.0, tiers: Literal["auto", 1, 2, 3] = "auto",
    port_speed_gbps: int = 0, split: bool = False,
) -> FatTree:
    """Leaves, spines and cores for `endpoints` (rail-optimized: nodes × NICs per node).

    Two tiers: L = ⌈E/d⌉ leaves with d downlinks, S = ⌈L·u/k⌉ spines. Three tiers: spines use k/2 ports
    down and k/2 up, S = ⌈L·u/(k/2)⌉, C = ⌈S·(k/2)/k⌉ cores. At 1:1 with k = 64 this reproduces the DGX
    SuperPOD tables (128 nodes: 32 leaves, 16 spines; 512 nodes: 128/128/64).
    """
    count = tiers_needed(endpoints, radix, oversubscription) if tiers == "auto" else tiers
    down, up = leaf_split(radix, oversubscription)
    if count == 1:
        return FatTree(endpoints, radix, 1, oversubscription, min(endpoints, radix), 0, 1, 0, 0,
                       capacity(radix, 1, oversubscription), port_speed_gbps, split)
    leaves = math.ceil(endpoints / down)
    if count == 2:
        spines = math.ceil(leaves * up / radix)
        cores = 0
    else:
        spines = math.ceil(leaves * up / (radix // 2))
        cores = math.ceil(spines * (radix // 2) / radix)
    return FatTree(endpoints, radix, min(count, 3), oversubscription, down, up, leaves, spines, cores,
                   capacity(radix, min(count, 3), oversubscription), port_speed_gbps, split)
