"""How target aws's nodes are powered (`POWER`): the controller's power-save programs launch and terminate them
with the EC2 provider (`powersave.py`), every compute pool on the baked image included."""

from __future__ import annotations

from clusterforge.model import Cluster, Pool
from clusterforge.target_kernel.protocol import NodePower
from clusterforge.targets.aws.powersave import Ec2Provider
from clusterforge.targets.aws.section import aws_section


def launches_pool(cluster: Cluster, pool: Pool) -> bool:
    """Compute pools on the image the stack bakes: their nodes configure themselves at boot, so slurmctld's
    power-save programs launch them (CreateFleet from the pool's launch template) and the stack owns no instance.
    A pinned `aws.ami` carries no boot phase: its pools stay one instance per node, configured by a push."""
    aws = aws_section(cluster)
    return pool.role == "compute" and aws is not None and aws.ami is None


POWER = NodePower(provider=Ec2Provider, launches_pool=launches_pool)
