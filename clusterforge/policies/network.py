"""Network rules: fat-tree tiers, oversubscription, rails, switch ports, EFA interfaces and placement."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pydantic import Field

from clusterforge.catalog import Instance
from clusterforge.model import SwitchedFabric
from clusterforge.plan.efa import reservation
from clusterforge.plan.fabric import capacity, leaf_split, tiers_needed
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.registry import rule

SUPERPOD = "NVIDIA DGX SuperPOD reference architecture"


def _switched(ctx: Context) -> SwitchedFabric | None:
    fabric = ctx.cluster.fabric
    return fabric if isinstance(fabric, SwitchedFabric) else None


@rule("NET-001", "error", "network", "Fabric tiers",
      "Al-Fares et al., SIGCOMM 2008 (k²/2 two-tier, k³/4 three-tier endpoints); " + SUPERPOD, targets="onprem")
def fabric_tiers(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Endpoints (nodes × compute NICs) fit the fat tree: ≤ k²/2 for two tiers, ≤ k³/4 for three (k = switch radix)."""
    fabric, tree = _switched(ctx), ctx.plan.fabric
    if fabric is None or tree is None:
        return
    needed = tiers_needed(tree.endpoints, tree.radix, fabric.oversubscription)
    if needed > 3:
        yield Draft(("fabric", "switch"), f"{tree.endpoints} endpoints exceed a three-tier fat tree of {tree.radix}-"
                    f"port {fabric.switch} switches ({capacity(tree.radix, 3, fabric.oversubscription)} endpoints)",
                    "use a higher-radix switch or split the cluster into fabrics", tree.endpoints,
                    capacity(tree.radix, 3, fabric.oversubscription), "endpoints")
    elif fabric.tiers != "auto" and needed > fabric.tiers:
        limit = capacity(tree.radix, fabric.tiers, fabric.oversubscription)
        yield Draft(("fabric", "tiers"), f"{tree.endpoints} endpoints need {needed} tiers of {tree.radix}-port "
                    f"switches; {fabric.tiers} tiers carry at most {limit}", f"set tiers: {needed} (or auto)",
                    tree.endpoints, limit, "endpoints")


class OversubscriptionSettings(Settings):
    max_oversubscription: float = Field(1.0, ge=1.0, description="compute fabric 1:1 unless configured")


@rule("NET-002", "error", "network", "Oversubscription", SUPERPOD + " (compute fabric non-blocking, 1:1)",
      OversubscriptionSettings, targets="onprem")
def oversubscription(ctx: Context, settings: OversubscriptionSettings) -> Iterator[Draft]:
    """The compute fabric's leaf down:up ratio is at most the configured maximum (1:1 by default)."""
    fabric = _switched(ctx)
    if fabric is not None and fabric.oversubscription > settings.max_oversubscription:
        yield Draft(("fabric", "oversubscription"),
                    f"the compute fabric is oversubscribed {fabric.oversubscription:g}:1; "
                    f"the policy allows {settings.max_oversubscription:g}:1",
                    "add spines for a non-blocking fabric, or raise NET-002 max_oversubscription in the policy config",
                    fabric.oversubscription,
                    settings.max_oversubscription, ":1")


@rule("NET-003", "error", "network", "Rail alignment", SUPERPOD + " (one NIC per GPU, NIC i on rail leaf i)",
      targets="onprem")
def rail_alignment(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """On a rail-optimized fabric every GPU node has one compute NIC per GPU (NIC i lands on rail leaf i)."""
    fabric = _switched(ctx)
    if fabric is None or not fabric.rail_optimized:
        return
    for i, pool in enumerate(ctx.cluster.pools):
        server = ctx.server(pool)
        if server is None or server.gpus is None or pool.role != "compute":
            continue
        nics = server.nics.compute if server.nics else 0
        if nics != server.gpus.count:
            yield Draft(("pools", i, "hardware"), f"{pool.hardware} has {nics} compute NICs for {server.gpus.count} "
                        "GPUs: rails cannot be aligned", "set rail_optimized: false or choose hardware with a NIC "
                        "per GPU", nics, server.gpus.count, "NICs", minimum=True)


@rule("NET-004", "error", "network", "Switch port budget", "NVIDIA QM9700 specification (64 × 400G)",
      targets="onprem")
def port_budget(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The switches the blueprint declares (leaves, spines, cores) have the ports for the cables the fabric needs."""
    fabric, tree = _switched(ctx), ctx.plan.fabric
    if fabric is None or tree is None:
        return
    down, up = leaf_split(tree.radix, fabric.oversubscription)
    if fabric.leaves is not None and tree.tiers > 1:
        per_leaf = math.ceil(tree.endpoints / fabric.leaves)
        if per_leaf > down:
            yield Draft(("fabric", "leaves"), f"{tree.endpoints} node cables over {fabric.leaves} leaves is "
                        f"{per_leaf} per leaf; a {tree.radix}-port leaf has {down} downlinks at "
                        f"{fabric.oversubscription:g}:1", f"declare at least {tree.leaves} leaves", per_leaf, down,
                        "ports")
    if fabric.spines is not None and tree.tiers > 1:
        leaves = fabric.leaves or tree.leaves
        spine_down = tree.radix if tree.tiers == 2 else tree.radix // 2
        per_spine = math.ceil(leaves * up / fabric.spines)
        if per_spine > spine_down:
            yield Draft(("fabric", "spines"), f"{leaves * up} leaf uplinks over {fabric.spines} spines is "
                        f"{per_spine} per spine; each has {spine_down} ports for leaves",
                        f"declare at least {tree.spines} spines", per_spine, spine_down, "ports")
    if fabric.cores is not None and tree.tiers == 3:
        spines = fabric.spines or tree.spines
        per_core = math.ceil(spines * (tree.radix // 2) / fabric.cores)
        if per_core > tree.radix:
            yield Draft(("fabric", "cores"), f"{spines * (tree.radix // 2)} spine uplinks over {fabric.cores} cores "
                        f"is {per_core} per core; each has {tree.radix} ports", f"declare at least {tree.cores} cores",
                        per_core, tree.radix, "ports")


@dataclass(frozen=True)
class Interface:
    """One network interface of a launch template, as CrossGuard and the stack see it."""

    network_card_index: int
    device_index: int
    interface_type: str


def efa_layout_problems(instance_type: str, instance: Instance, interfaces: Iterable[Interface]) -> list[str]:
    """Problems of a launch template's interface layout against the instance type (shared with CrossGuard)."""
    problems: list[str] = []
    listed = list(interfaces)
    efa = [i for i in listed if i.interface_type in ("efa", "efa-only")]
    if len(efa) > instance.efa_max_interfaces:
        problems.append(f"{len(efa)} EFA interfaces exceed {instance_type}'s maximum of {instance.efa_max_interfaces}")
    cards = [i.network_card_index for i in listed]
    if len(cards) != len(set(cards)):
        problems.append("network card indexes repeat: " + ", ".join(str(c) for c in sorted(cards)))
    bad = [c for c in cards if not 0 <= c < instance.network_cards]
    if bad:
        problems.append(f"network card indexes {bad} are outside 0..{instance.network_cards - 1}")
    primary = [i for i in listed if i.network_card_index == 0 and i.device_index == 0]
    if primary and primary[0].interface_type == "efa-only":
        problems.append("the primary interface (card 0, device 0) cannot be efa-only")
    return problems


@rule("NET-005", "error", "network", "EFA interfaces",
      "AWS EC2 User Guide, EFA supported instance types (p5/p5e 32, p5en 16, p6-b200 8, p4d 4)", targets="aws")
def efa_interfaces(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Configured EFA interfaces ≤ the instance maximum (error) and = it for full bandwidth (warning below)."""
    for i, pool in enumerate(ctx.cluster.pools):
        instance = ctx.instance(pool)
        if instance is None or pool.efa_interfaces is None:
            continue
        maximum = instance.efa_max_interfaces
        path = ("pools", i, "efa_interfaces")
        if pool.efa_interfaces > maximum:
            yield Draft(path, f"pool {pool.name} asks for {pool.efa_interfaces} EFA interfaces; {pool.hardware} "
                        f"supports {maximum}", f"set efa_interfaces: {maximum} or omit it", pool.efa_interfaces,
                        maximum, "interfaces")
        elif pool.efa_interfaces < maximum:
            bandwidth = instance.efa_bandwidth_gbps * pool.efa_interfaces / maximum if maximum else 0
            yield Draft(path, f"pool {pool.name} uses {pool.efa_interfaces} of {maximum} EFA interfaces: about "
                        f"{bandwidth:.0f} of {instance.efa_bandwidth_gbps} Gbps", "omit efa_interfaces for the "
                        "instance's full layout", pool.efa_interfaces, maximum, "interfaces", level="warning")


@rule("NET-006", "error", "network", "EFA placement",
      "AWS placement group docs; ParallelCluster EfaMultiAz / EfaPlacementGroup validators", targets="aws")
def efa_placement(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The EFA nodes of one pool share one cluster placement group in one AZ and one subnet. A pool that launches
    into an ODCR or a Capacity Block may go without a group of its own: AWS placed that capacity when it was
    reserved; an explicit `placement: none` on on-demand capacity is a warning (ParallelCluster does the same;
    the CrossGuard policy agrees)."""
    aws = ctx.cluster.aws
    if aws is None:
        return
    for i, pool in enumerate(ctx.cluster.pools):
        instance = ctx.instance(pool)
        if instance is None or not instance.efa_max_interfaces or pool.efa_interfaces == 0:
            continue
        if pool.placement != "cluster" and reservation(aws, pool) is None:
            # an explicit opt-out is the user's call, as in ParallelCluster's validator: warn, don't block
            yield Draft(("pools", i, "placement"), f"pool {pool.name} uses EFA on on-demand capacity without a "
                        "cluster placement group: its nodes may land far apart and lose EFA bandwidth and latency",
                        "set placement: cluster unless the spread is intended", level="warning",
                        group=f"pool {pool.name}")
        if pool.availability_zone is not None and pool.availability_zone not in aws.availability_zones:
            yield Draft(("pools", i, "availability_zone"), f"pool {pool.name} names AZ {pool.availability_zone}, "
                        f"not one of {', '.join(aws.availability_zones)}", "use one of aws.availability_zones")
        elif pool.availability_zone is None and len(aws.availability_zones) > 1:
            yield Draft(("aws", "availability_zones"), f"EFA pool {pool.name} would span "
                        f"{len(aws.availability_zones)} AZs; EFA traffic stays within one placement group in one AZ",
                        f"set pools[{i}].availability_zone or list one AZ", len(aws.availability_zones), 1, "AZs")
