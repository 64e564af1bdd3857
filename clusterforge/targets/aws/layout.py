"""The EFA interface layout of a launch template, from the catalog's card count and the pool's request.

AWS "EFA use case 1": the primary interface (card 0, device 0) is `efa` (EFA plus IP); every further card
gets one `efa-only` interface at device index 1, which carries RDMA traffic without taking a subnet IP.
"""

from __future__ import annotations

from clusterforge.catalog import Instance
from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.targets.aws.efa import Interface, efa_layout_problems

PRIMARY, EFA, EFA_ONLY, STANDARD = 0, "efa", "efa-only", "interface"


def efa_layout(interfaces: int) -> tuple[Interface, ...]:
    """`interfaces` EFA devices on cards 0..n-1; none means one standard (ENA) interface on card 0."""
    if interfaces <= 0:
        return (Interface(0, PRIMARY, STANDARD),)
    return (Interface(0, PRIMARY, EFA), *(Interface(card, 1, EFA_ONLY) for card in range(1, interfaces)))


def pool_layout(pool: str, instance_type: str, instance: Instance, interfaces: int) -> tuple[Interface, ...]:
    """The layout for one pool, checked with the same function CrossGuard runs on the launch template."""
    layout = efa_layout(interfaces)
    problems = efa_layout_problems(instance_type, instance, layout)
    if problems:
        raise ClusterforgeError([Problem(f"pool {pool}: {p}", hint="omit efa_interfaces for the full layout")
                                 for p in problems])
    return layout
