"""AWS EFA per pool: interfaces per node and the cluster placement group (NET-005, NET-006)."""

from __future__ import annotations

from clusterforge.catalog import Instance
from clusterforge.model import Aws, CapacityBlock, Cluster, Odcr, Pool

RESERVED_ROLE = "compute"  # reservations and Capacity Blocks hold the training instance type


def reservation(aws: Aws, pool: Pool) -> Odcr | CapacityBlock | None:
    """The blueprint's ODCR or Capacity Block when this pool launches into it: compute pools only (controller
    and login nodes run on demand). AWS fixed such capacity's placement when it was reserved."""
    capacity = aws.capacity
    if pool.role != RESERVED_ROLE or not isinstance(capacity, Odcr | CapacityBlock):
        return None
    return capacity


def efa_interfaces(pool: Pool, instance: Instance) -> int:
    """What the blueprint asks for, else the instance type's maximum (one EFA per network card)."""
    return pool.efa_interfaces if pool.efa_interfaces is not None else instance.efa_max_interfaces


def placement_group(cluster: Cluster, pool: Pool, instance: Instance) -> str | None:
    """One cluster placement group per pool (`<cluster>-<pool>`), unless the pool or its type opts out."""
    if pool.placement != "cluster" or not instance.placement_group:
        return None
    return f"{cluster.name}-{pool.name}"


def availability_zone(cluster: Cluster, pool: Pool) -> str | None:
    """The pool's AZ id: its own, else the first of the cluster's (a placement group lives in one AZ)."""
    if pool.availability_zone is not None:
        return pool.availability_zone
    return cluster.aws.availability_zones[0] if cluster.aws else None
