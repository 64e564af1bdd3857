"""What target onprem brings to the blueprint (`BLUEPRINT`): its pools' own field (`bmc:`); and what it requires of a
blueprint beyond the schema: an existing Lustre (a cloud pool's own fields on an
on-prem pool are refused by the kernel, clusterforge/target_kernel/checks.py)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.core.errors import Problem
from clusterforge.core.source import Source
from clusterforge.model import Cluster, OnPremLustre
from clusterforge.target_kernel.protocol import BlueprintPart
from clusterforge.targets.onprem.pool import OnpremPool


def blueprint_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    lustre = cluster.storage.lustre
    if lustre is not None and not isinstance(lustre, OnPremLustre):  # a cloud's managed Lustre
        yield source.problem(("storage", "lustre"), "FSx settings need target: aws",
                             "on-prem, give mount, mgs_nid and fsname of the existing file system")


BLUEPRINT = BlueprintPart(pool_fields=OnpremPool, problems=blueprint_problems)
