"""The fabric's bill of materials per tier: switches, ports used of ports fitted, cables up to the next tier."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.plan.model import FatTree


@dataclass(frozen=True)
class TierBom:
    tier: str  # leaf | spine | core
    switches: int
    ports_used: int
    ports_total: int
    cables_down: int  # cables from the tier below (nodes for leaves)


def fabric_bom(fabric: FatTree) -> list[TierBom]:
    """Leaves carry the endpoints plus their uplinks; spines those uplinks plus (three tiers) k/2 up each;
    cores the spines' uplinks."""
    cables = fabric.cables
    node_leaf = cables["node-leaf"]
    leaf_spine = cables.get("leaf-spine", 0)
    spine_core = cables.get("spine-core", 0)
    out = [TierBom("leaf", fabric.leaves, node_leaf + leaf_spine, fabric.leaves * fabric.radix, node_leaf)]
    if fabric.tiers >= 2:
        out.append(TierBom("spine", fabric.spines, leaf_spine + spine_core, fabric.spines * fabric.radix, leaf_spine))
    if fabric.tiers >= 3:
        out.append(TierBom("core", fabric.cores, spine_core, fabric.cores * fabric.radix, spine_core))
    return out
