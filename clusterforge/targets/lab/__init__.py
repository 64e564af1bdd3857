"""Target lab: a pool whose nodes are containers of the local lab (`clusterforge lab up`), started and removed by
clusterforge's power-save programs as EC2 instances are on AWS. It lets SLURM's real power saving (State=CLOUD
nodes, ResumeProgram, SuspendProgram, the reconcile timer) run end to end on one machine: a pool of an on-prem
cluster names it (`target: lab`) with a `max_count`, and the lab's power agent (clusterforge/lab/power_agent.py)
answers the programs' provider of this target (`powersave.py` beside this file). A whole cluster on it is refused:
the lab runs an on-prem blueprint, and only its power-saved pools are made on demand."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog import Server
from clusterforge.core.errors import Problem
from clusterforge.core.source import Source
from clusterforge.model import Cluster
from clusterforge.target_kernel.protocol import Target
from clusterforge.targets.lab.powersave import LabProvider


def blueprint_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    if cluster.target == TARGET.name:
        yield source.problem(("target",), f"target {TARGET.name} is for power-saved pools of a lab cluster",
                             "set target: onprem on the cluster and target: lab on the pools with a max_count")
    for index, pool in enumerate(cluster.pools):
        if pool.target == TARGET.name and not pool.power_saved:
            yield source.problem(("pools", index, "max_count"), f"pool {pool.name} runs on target {TARGET.name}, "
                                 "whose nodes exist only while SLURM powers them up, but has no max_count",
                                 f"give it a max_count (at least its count, {pool.count})")


TARGET = Target(name="lab", title="lab containers", hardware=Server, blueprint_problems=blueprint_problems,
                power_provider=LabProvider)
