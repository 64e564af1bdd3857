"""What target aws requires of a blueprint beyond the schema: its `aws:` section and FSx storage."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.core.errors import Problem
from clusterforge.core.source import Source
from clusterforge.model import Cluster, OnPremLustre
from clusterforge.targets.aws.section import aws_section


def blueprint_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    if aws_section(cluster) is None:
        yield source.problem(("target",), "target: aws needs an `aws:` section",
                             "add aws: {region: ..., availability_zones: [...]}")
    if isinstance(cluster.storage.lustre, OnPremLustre):
        yield source.problem(("storage", "lustre"), "on AWS, lustre is FSx: give capacity_gib and deployment_type")
