"""Network rules of switched fabrics: fat-tree tiers, oversubscription, rails and switch ports."""

from __future__ import annotations

import math
from collections.abc import Iterator

from pydantic import Field

from clusterforge.model import Oversubscription, SwitchedFabric
from clusterforge.plan.fabric import capacity, leaf_split, tiers_needed
from clusterforge.plan.topology import fabric_nics
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("network", "Network", 40)

SUPERPOD = "NVIDIA DGX SuperPOD reference architecture"


def _switched(ctx: Context) -> SwitchedFabric | None:
    fabric = ctx.cluster.fabric
    return fabric if isinstance(fabric, SwitchedFabric) else None


@rule("NET-001", "error", DOMAIN, "Fabric tiers",
      "Al-Fares et al., SIGCOMM 2008 (k²/2 two-tier, k³/4 three-tier endpoints); " + SUPERPOD, target="onprem",
      inputs=Inputs(("fabric.{kind,switch,tiers,oversubscription}", "pools[].{hardware,count,role}"),
             ("nics", "ports")))
def fabric_tiers(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Endpoints (nodes × compute NICs) fit the fat tree: ≤ k²/2 for two tiers, ≤ k³/4 for three (k = switch radix)."""
    fabric, tree = _switched(ctx), ctx.plan.fabric
    if fabric is None or tree is None:
        return
    ratios = (fabric.ratios.leaf, fabric.ratios.spine)
    needed = tiers_needed(tree.endpoints, tree.radix, *ratios)
    if needed > 3:
        yield Draft(("fabric", "switch"), f"{tree.endpoints} endpoints exceed a three-tier fat tree of {tree.radix}-"
                    f"port {fabric.switch} switches ({capacity(tree.radix, 3, *ratios)} endpoints)",
                    "use a higher-radix switch or split the cluster into fabrics", tree.endpoints,
                    capacity(tree.radix, 3, *ratios), "endpoints")
    elif fabric.tiers != "auto" and needed > fabric.tiers:
        limit = capacity(tree.radix, fabric.tiers, *ratios)
        yield Draft(("fabric", "tiers"), f"{tree.endpoints} endpoints need {needed} tiers of {tree.radix}-port "
                    f"switches; {fabric.tiers} tiers carry at most {limit}", f"set tiers: {needed} (or auto)",
                    tree.endpoints, limit, "endpoints")


class OversubscriptionSettings(Settings):
    max_oversubscription: float = Field(1.0, ge=1.0, description="compute fabric 1:1 unless configured")


@rule("NET-002", "error", DOMAIN, "Oversubscription", SUPERPOD + " (compute fabric non-blocking, 1:1)",
      OversubscriptionSettings, target="onprem",
      inputs=Inputs(("fabric.{oversubscription,tiers}", "pools[].{hardware,count,role}"), ("nics", "ports")))
def oversubscription(ctx: Context, settings: OversubscriptionSettings) -> Iterator[Draft]:
    """Each tier's down:up ratio (the leaf's, and a three-tier tree's spine's) is at most the configured maximum."""
    fabric, tree = _switched(ctx), ctx.plan.fabric
    if fabric is None:
        return
    per_tier = isinstance(fabric.oversubscription, Oversubscription)
    tiers = [("leaf", fabric.ratios.leaf)]
    if tree is not None and tree.tiers >= 3:  # a two-tier spine has no uplinks to oversubscribe
        tiers.append(("spine", fabric.ratios.spine))
    for tier, ratio in tiers:
        if ratio > settings.max_oversubscription:
            yield Draft(("fabric", "oversubscription", tier) if per_tier else ("fabric", "oversubscription"),
                        f"the compute fabric's {tier}s are oversubscribed {ratio:g}:1; "
                        f"the policy allows {settings.max_oversubscription:g}:1",
                        f"add {'spines' if tier == 'leaf' else 'cores'} for a non-blocking fabric, or raise NET-002 "
                        "max_oversubscription in the policy config", ratio, settings.max_oversubscription, ":1")


@rule("NET-003", "error", DOMAIN, "Rail alignment", SUPERPOD + " (one NIC per GPU, NIC i on rail leaf i)",
      target="onprem",
      inputs=Inputs(("fabric.rail_optimized", "pools[].{hardware,role}"), ("gpus", "nics")))
def rail_alignment(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """On a rail-optimized fabric every GPU node has one compute NIC per GPU (NIC i lands on rail leaf i)."""
    fabric = _switched(ctx)
    if fabric is None or not fabric.rail_optimized:
        return
    for i, pool in enumerate(ctx.cluster.pools):
        server = ctx.server(pool)
        gpus, node_nics = server.node_gpus if server else None, server.node_nics if server else None
        if gpus is None or pool.role != "compute":
            continue
        nics = node_nics.compute if node_nics else 0
        if nics != gpus.count:
            yield Draft(("pools", i, "hardware"), f"{pool.hardware} has {nics} compute NICs for {gpus.count} "
                        "GPUs per node: rails cannot be aligned", "set rail_optimized: false or choose hardware "
                        "with a NIC per GPU", nics, gpus.count, "NICs", minimum=True)


@rule("NET-004", "error", DOMAIN, "Switch port budget", "NVIDIA QM9700 specification (64 × 400G)",
      target="onprem",
      inputs=Inputs(("fabric.{switch,oversubscription,leaves,spines,cores}", "pools[].{hardware,count,role}"),
             ("nics", "ports")))
def port_budget(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The switches the blueprint declares (leaves, spines, cores) have the ports for the cables the fabric needs."""
    fabric, tree = _switched(ctx), ctx.plan.fabric
    if fabric is None or tree is None:
        return
    down, up = leaf_split(tree.radix, fabric.ratios.leaf)
    if fabric.leaves is not None and tree.tiers > 1:
        per_leaf = math.ceil(tree.endpoints / fabric.leaves)
        if per_leaf > down:
            yield Draft(("fabric", "leaves"), f"{tree.endpoints} node cables over {fabric.leaves} leaves is "
                        f"{per_leaf} per leaf; a {tree.radix}-port leaf has {down} downlinks at "
                        f"{fabric.ratios.leaf:g}:1", f"declare at least {tree.leaves} leaves", per_leaf, down,
                        "ports")
    spine_down, spine_up = tree.spine_downlinks, tree.spine_uplinks
    if fabric.spines is not None and tree.tiers > 1:
        leaves = fabric.leaves or tree.leaves
        per_spine = math.ceil(leaves * up / fabric.spines)
        if per_spine > spine_down:
            yield Draft(("fabric", "spines"), f"{leaves * up} leaf uplinks over {fabric.spines} spines is "
                        f"{per_spine} per spine; each has {spine_down} ports for leaves",
                        f"declare at least {tree.spines} spines", per_spine, spine_down, "ports")
    if fabric.cores is not None and tree.tiers == 3:
        spines = fabric.spines or tree.spines
        per_core = math.ceil(spines * spine_up / fabric.cores)
        if per_core > tree.radix:
            yield Draft(("fabric", "cores"), f"{spines * spine_up} spine uplinks over {fabric.cores} cores "
                        f"is {per_core} per core; each has {tree.radix} ports", f"declare at least {tree.cores} cores",
                        per_core, tree.radix, "ports")


@rule("NET-007", "error", DOMAIN, "NIC and switch port speed",
      "NVIDIA twin-port OSFP transceiver documentation (an 800G cage carries two 400G ports; 1:2 splitters give "
      "200G); hardware-2026 reference, section 3.2", target="onprem",
      inputs=Inputs(("fabric.switch", "pools[].{hardware,role}"), ("nics", "port_speed_gbps", "split_speed_gbps")))
def port_speed(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """No compute NIC is faster than the fabric's switch ports: its link would run at the port's speed. A NIC at
    the switch's split speed is no error: the planner splits the ports and doubles the radix (`plan` says so)."""
    fabric, tree = _switched(ctx), ctx.plan.fabric
    if fabric is None or tree is None:
        return
    for i, pool in enumerate(ctx.cluster.pools):
        server = ctx.server(pool)
        nics = server.node_nics if server else None
        if server is None or nics is None or not fabric_nics(pool, server):
            continue
        if nics.speed_gbps > tree.port_speed_gbps:
            yield Draft(("pools", i, "hardware"), f"{pool.hardware} has {nics.speed_gbps}G compute NICs; "
                        f"{fabric.switch} ports run at {tree.port_speed_gbps}G, so every link would run at "
                        f"{tree.port_speed_gbps}G", f"choose a {nics.speed_gbps}G switch for the fabric",
                        nics.speed_gbps, tree.port_speed_gbps, "Gb/s")
