"""Target aws: a blueprint's Pulumi program for GPU clusters (EFA, placement, Capacity Blocks, FSx).

The design (`design`, `layout`, `addressing`, `userdata`, `guard`, `inventory`) is pure Python and imports
without Pulumi, so the CLI can turn stack outputs into an inventory on a machine without the `aws` extra.
`components` and `program` need `pulumi` and `pulumi-aws` (`pip install 'clusterforge[aws]'`).
The target's own rules (EFA, FSx, security) are in `rules`, the CrossGuard pack in `crossguard`. Its part of the
catalog is here too: its kind of instance type (`instance`), software tables (`software`) and price tables
(`prices`), filled from `data/` (instance types, prices, software rows, each with its source); so is the power-save
provider the controller's programs launch its instances with (`powersave`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge.catalog import CatalogPart
from clusterforge.target_kernel.protocol import RenderInput, Target
from clusterforge.targets.aws.blueprint import blueprint_problems
from clusterforge.targets.aws.deployed import READER
from clusterforge.targets.aws.efa import node_facts
from clusterforge.targets.aws.fabric import EfaFabric
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.powersave import Ec2Provider
from clusterforge.targets.aws.powersave_launch import purchase
from clusterforge.targets.aws.prices import AwsPrices
from clusterforge.targets.aws.section import Aws, AwsPool, aws_section
from clusterforge.targets.aws.settings import DEFAULT_CONTROLLER_TYPE
from clusterforge.targets.aws.software import TABLES

if TYPE_CHECKING:
    from clusterforge.model import Cluster, Pool

PROJECT_DIR = Path("stacks") / "aws"  # the Pulumi project, from the directory clusterforge runs in
DATA = Path(__file__).parent / "data"
CATALOG = CatalogPart(files=(DATA / "aws.yaml", DATA / "software.yaml", DATA / "prices.yaml"), instance=Ec2Instance,
                      software=TABLES, prices=AwsPrices)


def _with_controller(cluster: Cluster, instance_type: str | None) -> tuple[Cluster, bool]:
    from clusterforge.targets.aws.design import with_controller

    return with_controller(cluster, instance_type or DEFAULT_CONTROLLER_TYPE)


def _render(ctx: RenderInput) -> dict[str, str]:
    """The stack config, and what the stack builds resource by resource (pulumi/resources.yaml, for `diff`)."""
    from clusterforge.targets.aws import cloud_resources, stack_config

    return stack_config.render(ctx) | cloud_resources.render(ctx)










def _group_vars(cluster: Cluster) -> dict[str, Any]:
    """The region every node runs in (all.yml), and on the baked image the venv whose Python (pydantic 2, boto3)
    runs the controller's power-save programs."""
    from clusterforge.targets.aws.userdata_boot import VENV

    aws = aws_section(cluster)
    if aws is None:
        return {}
    return {"aws_region": aws.region} | ({"slurm_power_save_python": f"{VENV}/bin/python"} if aws.ami is None else {})


def _price_region(cluster: Cluster) -> str | None:
    """EC2, Capacity Blocks and FSx are priced per region: the blueprint's `aws.region` names whose prices apply."""
    aws = aws_section(cluster)
    return aws.region if aws is not None else None


def _launches_pool(cluster: Cluster, pool: Pool) -> bool:
    """Compute pools on the image the stack bakes: their nodes configure themselves at boot, so slurmctld's
    power-save programs launch them (CreateFleet from the pool's launch template) and the stack owns no instance.
    A pinned `aws.ami` carries no boot phase: its pools stay one instance per node, configured by a push."""
    aws = aws_section(cluster)
    return pool.role == "compute" and aws is not None and aws.ami is None








TARGET = Target(
    name="aws", title="AWS", hardware=Ec2Instance, section="aws", section_model=Aws, pool_fields=AwsPool,
    fabrics=(EfaFabric,), lustre=FsxLustre, catalog=CATALOG,
    power_provider=Ec2Provider, launches_pool=_launches_pool,
    blueprint_problems=blueprint_problems, with_controller=_with_controller, render=_render,
    node_facts=node_facts, group_vars=_group_vars,
     purchase=purchase, price_region=_price_region, project_dir=PROJECT_DIR, outputs=READER,

    mount_prefixes=(str(FsxLustre.model_fields["mount"].default),),
)
