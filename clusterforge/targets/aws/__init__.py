"""Target aws: a blueprint's Pulumi program for GPU clusters (EFA, placement, Capacity Blocks, FSx).

The design (`design`, `layout`, `addressing`, `userdata`, `guard`, `inventory`) is pure Python and imports
without Pulumi, so the CLI can turn stack outputs into an inventory on a machine without the `aws` extra.
`components` and `program` need `pulumi` and `pulumi-aws` (`pip install 'clusterforge[aws]'`).
The target's own rules (EFA, FSx, security) are in `rules`, the CrossGuard pack in `crossguard`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge.catalog import Catalog, Instance
from clusterforge.targets.aws.blueprint import blueprint_problems
from clusterforge.targets.aws.deployed import READER
from clusterforge.targets.aws.efa import node_facts
from clusterforge.targets.aws.section import Aws, AwsPool, aws_section
from clusterforge.targets.aws.settings import DEFAULT_CONTROLLER_TYPE
from clusterforge.targets.protocol import RenderInput, Target

if TYPE_CHECKING:
    from clusterforge.day2.effects import TargetEffects
    from clusterforge.model import Cluster, Pool

PROJECT_DIR = Path("stacks") / "aws"  # the Pulumi project, from the directory clusterforge runs in


def _with_controller(cluster: Cluster, instance_type: str | None) -> tuple[Cluster, bool]:
    from clusterforge.targets.aws.design import with_controller

    return with_controller(cluster, instance_type or DEFAULT_CONTROLLER_TYPE)


def _render(ctx: RenderInput) -> dict[str, str]:
    from clusterforge.targets.aws.stack_config import render

    return render(ctx)


def _report_pools(cluster: Cluster, catalog: Catalog) -> list[dict[str, Any]]:
    from clusterforge.targets.aws.report import cloud_pools

    return cloud_pools(cluster, catalog)


def _group_vars(cluster: Cluster) -> dict[str, Any]:
    """The region every node runs in (all.yml), and on the baked image the venv whose Python (pydantic 2, boto3)
    runs the controller's power-save programs."""
    from clusterforge.targets.aws.userdata_boot import VENV

    aws = aws_section(cluster)
    if aws is None:
        return {}
    return {"aws_region": aws.region} | ({"slurm_power_save_python": f"{VENV}/bin/python"} if aws.ami is None else {})


def _purchase(cluster: Cluster, pool: Pool) -> str | None:
    """A compute pool launches into the blueprint's Capacity Block or ODCR; every other pool runs on demand."""
    from clusterforge.targets.aws.efa import reservation

    aws = aws_section(cluster)
    capacity = reservation(aws, pool) if aws is not None else None
    if capacity is None:
        return "on-demand"
    return "reservation" if capacity.type == "odcr" else capacity.type


def _launches_pool(cluster: Cluster, pool: Pool) -> bool:
    """Compute pools on the image the stack bakes: their nodes configure themselves at boot, so slurmctld's
    power-save programs launch them (CreateFleet from the pool's launch template) and the stack owns no instance.
    A pinned `aws.ami` carries no boot phase: its pools stay one instance per node, configured by a push."""
    aws = aws_section(cluster)
    return pool.role == "compute" and aws is not None and aws.ami is None


def _effects() -> TargetEffects:
    from clusterforge.targets.aws.day2 import EFFECTS  # imports day2, which asks the targets: read on use

    return EFFECTS


TARGET = Target(
    name="aws", title="AWS", hardware=Instance, section="aws", section_model=Aws, pool_fields=AwsPool,
    exclusive_fabrics=("efa",), efa_software=True, powers_nodes=True, launches_pool=_launches_pool,
    blueprint_problems=blueprint_problems, with_controller=_with_controller,
    render=_render, report_pools=_report_pools, node_facts=node_facts, group_vars=_group_vars, purchase=_purchase,
    project_dir=PROJECT_DIR, outputs=READER, effects=_effects,
)
