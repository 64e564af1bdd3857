"""What target onprem requires of a blueprint beyond the schema: an existing Lustre, no cloud interfaces."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.errors import Problem
from clusterforge.model import Cluster, FsxLustre
from clusterforge.source import Source


def blueprint_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    for i, pool in enumerate(cluster.pools):
        if pool.efa_interfaces is not None:
            yield source.problem(("pools", i, "efa_interfaces"), "efa_interfaces applies to target: aws only")
    if isinstance(cluster.storage.lustre, FsxLustre):
        yield source.problem(("storage", "lustre"), "FSx settings need target: aws",
                             "on-prem, give mount, mgs_nid and fsname of the existing file system")
