"""What target aws brings to the blueprint (`BLUEPRINT`): its `aws:` section, its pools' own fields, the EFA fabric and
its software pins, FSx for Lustre as managed storage and where it mounts, the controller it adds; and what it
requires beyond the schema: its `aws:` section and FSx storage."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.core.errors import Problem
from clusterforge.core.source import Source
from clusterforge.model import Cluster, OnPremLustre
from clusterforge.target_kernel.protocol import BlueprintPart
from clusterforge.targets.aws.fabric import EfaFabric
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.section import Aws, AwsPool, aws_section
from clusterforge.targets.aws.settings import DEFAULT_CONTROLLER_TYPE
from clusterforge.targets.aws.software_pins import EfaPins


def blueprint_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    if aws_section(cluster) is None:
        yield source.problem(("target",), "target: aws needs an `aws:` section",
                             "add aws: {region: ..., availability_zones: [...]}")
    if isinstance(cluster.storage.lustre, OnPremLustre):
        yield source.problem(("storage", "lustre"), "on AWS, lustre is FSx: give capacity_gib and deployment_type")


def with_controller(cluster: Cluster, instance_type: str | None) -> tuple[Cluster, bool]:
    """The cluster with the controller pool the stack adds when the blueprint has none (`aws.controller_type`, else
    the target's default type)."""
    from clusterforge.targets.aws.design import with_controller as added

    return added(cluster, instance_type or DEFAULT_CONTROLLER_TYPE)


BLUEPRINT = BlueprintPart(section="aws", section_model=Aws, pool_fields=AwsPool, fabrics=(EfaFabric,),
                          lustre=FsxLustre, mount_prefixes=(str(FsxLustre.model_fields["mount"].default),),
                          software=EfaPins, problems=blueprint_problems, with_controller=with_controller)
