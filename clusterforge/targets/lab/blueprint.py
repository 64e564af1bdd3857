"""What target lab requires of a blueprint (`BLUEPRINT`): it runs power-saved pools of an on-prem cluster only."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.core.errors import Problem
from clusterforge.core.source import Source
from clusterforge.model import Cluster
from clusterforge.target_kernel.protocol import BlueprintPart

NAME = "lab"


def blueprint_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    if cluster.target == NAME:
        yield source.problem(("target",), f"target {NAME} is for power-saved pools of a lab cluster",
                             "set target: onprem on the cluster and target: lab on the pools with a max_count")
    for index, pool in enumerate(cluster.pools):
        if pool.target == NAME and not pool.power_saved:
            yield source.problem(("pools", index, "max_count"), f"pool {pool.name} runs on target {NAME}, "
                                 "whose nodes exist only while SLURM powers them up, but has no max_count",
                                 f"give it a max_count (at least its count, {pool.count})")


BLUEPRINT = BlueprintPart(problems=blueprint_problems)
