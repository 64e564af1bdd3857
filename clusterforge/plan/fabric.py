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


def spine_split(radix: int, oversubscription: float) -> tuple[int, int]:
    """(downlinks, uplinks) of a spine in a three-tier tree: ⌊k·r/(1+r)⌋ ports to leaves and the ⌈down/r⌉ ports
    to cores that keep down:up at r:1 (k/2 each at 1:1, as in Al-Fares' tree; spare ports stay unused).
    Taking only the uplinks the ratio needs is the point of oversubscribing the spines: fewer cores."""
    down = max(radix // 2, min(radix - 1, math.floor(radix * oversubscription / (1 + oversubscription))))
    return down, min(radix - down, math.ceil(down / oversubscription))


def capacity(radix: int, tiers: int, oversubscription: float = 1.0, spine_oversubscription: float = 1.0) -> int:
    """Most endpoints a fat tree of `tiers` tiers can carry: k, d·k (k²/2 at 1:1), and d·s·k (k³/4 at 1:1),
    with d a leaf's and s a spine's downlinks: a core has k ports, one per pod, and a pod is s leaves."""
    down, _ = leaf_split(radix, oversubscription)
    if tiers == 1:
        return radix
    if tiers == 2:
        return down * radix
    spine_down, _ = spine_split(radix, spine_oversubscription)
    return down * spine_down * radix


def tiers_needed(endpoints: int, radix: int, oversubscription: float = 1.0, spine_oversubscription: float = 1.0) -> int:
    """Fewest tiers that carry `endpoints` (4 means more than three tiers can: too big for this radix)."""
    for tiers in (1, 2, 3):
        if endpoints <= capacity(radix, tiers, oversubscription, spine_oversubscription):
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
    port_speed_gbps: int = 0, split: bool = False, spine_oversubscription: float = 1.0,
) -> FatTree:
    """Leaves, spines and cores for `endpoints` (rail-optimized: nodes × NICs per node).

    Two tiers: L = ⌈E/d⌉ leaves with d downlinks and u uplinks, S = ⌈L·u/k⌉ spines. Three tiers: spines use s
    ports down and t up (k/2 each at 1:1; `spine_split`), S = ⌈L·u/s⌉, C = ⌈S·t/k⌉ cores. At 1:1 with k = 64
    this reproduces the DGX SuperPOD tables (128 nodes: 32 leaves, 16 spines; 512 nodes: 128/128/64).
    `oversubscription` is the leaves' down:up, `spine_oversubscription` the spines' (three tiers only).
    """
    ratios = (oversubscription, spine_oversubscription)
    count = tiers_needed(endpoints, radix, *ratios) if tiers == "auto" else tiers
    down, up = leaf_split(radix, oversubscription)
    if count == 1:
        return FatTree(endpoints, radix, 1, oversubscription, min(endpoints, radix), 0, 1, 0, 0,
                       capacity(radix, 1, *ratios), port_speed_gbps, split, spine_oversubscription)
    leaves = math.ceil(endpoints / down)
    if count == 2:
        spine_down, spine_up = radix, 0
        spines = math.ceil(leaves * up / radix)
        cores = 0
    else:
        spine_down, spine_up = spine_split(radix, spine_oversubscription)
        spines = math.ceil(leaves * up / spine_down)
        cores = math.ceil(spines * spine_up / radix)
    return FatTree(endpoints, radix, min(count, 3), oversubscription, down, up, leaves, spines, cores,
                   capacity(radix, min(count, 3), *ratios), port_speed_gbps, split, spine_oversubscription,
                   spine_down, spine_up)
