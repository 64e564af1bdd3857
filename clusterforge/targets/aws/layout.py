"""The EFA interface layout of a launch template, from the catalog's card count and the pool's request.

Types whose card 0 carries EFA keep AWS "EFA use case 1": the primary interface (card 0, device 0) is `efa` (EFA
plus IP); every further card gets one `efa-only` interface at device index 1, which carries RDMA traffic without
taking a subnet IP.

Types whose card 0 is ENA only (`primary_card_efa: false`, p6-b300) follow AWS's current guidance, as AWS
engineering gave it for p6-b300 and ParallelCluster builds it: card 0 holds only the primary `interface` (ENA), and
each EFA card 1..n one `efa-only` interface at device index 0 (AWS EC2 User Guide, efa-acc-inst-types;
aws/aws-parallelcluster issue 7143).

A card that takes a single interface (the catalog's `network_card_interfaces`: p6e-gb200's odd cards) holds its
`efa-only` interface at device index 0, as ParallelCluster builds it ("device_index=0 if
network_card.maximum_network_interfaces() == 1 else 1", aws/aws-parallelcluster PR 6930).
"""

from __future__ import annotations

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.targets.aws.efa import Interface, efa_layout_problems
from clusterforge.targets.aws.instance import Ec2Instance

PRIMARY, EFA, EFA_ONLY, STANDARD = 0, "efa", "efa-only", "interface"


def efa_layout(interfaces: int, primary_card_efa: bool = True,
               card_interfaces: tuple[int, ...] | None = None) -> tuple[Interface, ...]:
    """`interfaces` EFA devices on the first cards that carry EFA; none means one standard (ENA) interface on
    card 0. Card 0 is `efa` when it carries EFA, else a standard interface before cards 1..interfaces. A card
    `card_interfaces` lists as taking one interface holds its `efa-only` at device index 0."""
    if interfaces <= 0:
        return (Interface(0, PRIMARY, STANDARD),)
    if not primary_card_efa:
        return (Interface(0, PRIMARY, STANDARD), *(Interface(card, 0, EFA_ONLY) for card in range(1, interfaces + 1)))

    def device(card: int) -> int:
        single = card_interfaces is not None and card < len(card_interfaces) and card_interfaces[card] == 1
        return 0 if single else 1

    return (Interface(0, PRIMARY, EFA), *(Interface(card, device(card), EFA_ONLY) for card in range(1, interfaces)))


def instance_layout(instance: Ec2Instance, interfaces: int) -> tuple[Interface, ...]:
    """The layout for `interfaces` EFA devices on this instance type (its card 0 and its cards' interface counts
    decide the form)."""
    return efa_layout(interfaces, instance.primary_card_efa, instance.network_card_interfaces)


def pool_layout(pool: str, instance_type: str, instance: Ec2Instance, interfaces: int) -> tuple[Interface, ...]:
    """The layout for one pool, checked with the same function CrossGuard runs on the launch template."""
    layout = instance_layout(instance, interfaces)
    problems = efa_layout_problems(instance_type, instance, layout)
    if problems:
        raise ClusterforgeError([Problem(f"pool {pool}: {p}", hint="omit efa_interfaces for the full layout")
                                 for p in problems])
    return layout
