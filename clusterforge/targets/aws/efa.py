"""AWS EFA per pool: interfaces per node, the cluster placement group and the launch template layout
(NET-005, NET-006 and their CrossGuard policies)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.catalog import Entry
from clusterforge.model import Cluster, Pool
from clusterforge.target_kernel.protocol import NodeFacts
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.section import Aws, CapacityBlock, Odcr, aws_pool, aws_section

RESERVED_ROLE = "compute"  # reservations and Capacity Blocks hold the training instance type


def reservation(aws: Aws, pool: Pool) -> Odcr | CapacityBlock | None:
    """The blueprint's ODCR or Capacity Block when this pool launches into it: compute pools only (controller
    and login nodes run on demand). AWS fixed such capacity's placement when it was reserved."""
    capacity = aws.capacity
    if pool.role != RESERVED_ROLE or not isinstance(capacity, Odcr | CapacityBlock):
        return None
    return capacity


def efa_interfaces(pool: Pool, instance: Ec2Instance) -> int:
    """What the blueprint asks for, else the instance type's maximum (one EFA per network card)."""
    asked = aws_pool(pool).efa_interfaces
    return asked if asked is not None else instance.efa_max_interfaces


def placement_group(cluster: Cluster, pool: Pool, instance: Ec2Instance) -> str | None:
    """One cluster placement group per pool (`<cluster>-<pool>`), unless the pool or its type opts out."""
    if aws_pool(pool).placement != "cluster" or not instance.placement_group:
        return None
    return f"{cluster.name}-{pool.name}"


def availability_zone(cluster: Cluster, pool: Pool) -> str | None:
    """The pool's AZ id: its own, else the first of the cluster's (a placement group lives in one AZ)."""
    own = aws_pool(pool).availability_zone
    if own is not None:
        return own
    aws = aws_section(cluster)
    return aws.availability_zones[0] if aws else None


def node_facts(cluster: Cluster, pool: Pool, entry: Entry) -> NodeFacts:
    """The facts an instance pool's nodes carry in the inventory (the `node_facts` hook of the target)."""
    if not isinstance(entry, Ec2Instance):
        return NodeFacts()
    efa, zone = efa_interfaces(pool, entry), availability_zone(cluster, pool)
    group = placement_group(cluster, pool, entry)
    return NodeFacts((("efa_interfaces", efa), ("placement_group", group), ("availability_zone", zone)),
                     f"{efa} EFA, pg {group or '-'}, {zone}")


@dataclass(frozen=True)
class Interface:
    """One network interface of a launch template, as CrossGuard and the stack see it."""

    network_card_index: int
    device_index: int
    interface_type: str


def efa_layout_problems(instance_type: str, instance: Ec2Instance, interfaces: Iterable[Interface]) -> list[str]:
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
    crowded = sorted({(i.network_card_index, i.device_index) for i in listed
                      if (room := instance.interfaces_on(i.network_card_index)) is not None
                      and i.device_index >= room})
    for card, index in crowded:
        problems.append(f"network card {card} of {instance_type} takes {instance.interfaces_on(card)} interface(s): "
                        f"device index {index} is refused (use device index 0 on a card that takes one)")
    primary = [i for i in listed if i.network_card_index == 0 and i.device_index == 0]
    if primary and primary[0].interface_type == "efa-only":
        problems.append("the primary interface (card 0, device 0) cannot be efa-only")
    no_efa = sorted({i.network_card_index for i in efa if 0 <= i.network_card_index < instance.network_cards}
                    - set(instance.efa_cards))
    if no_efa:
        carriers = instance.efa_cards
        where = (f"EFA interfaces go on cards {carriers.start}..{carriers.stop - 1}" if carriers
                 else "it has no EFA card")
        problems.append(f"network card {', '.join(map(str, no_efa))} of {instance_type} carries no EFA (ENA only): "
                        f"{where}")
    return problems
