"""What target aws adds to render (`RENDER`): the Pulumi stack config and the resources the stack builds, each pool's
EFA and placement facts, the region its nodes run in, and how `--from-outputs` reads what the stack reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clusterforge.model import Cluster
from clusterforge.target_kernel.protocol import RenderInput, RenderPart
from clusterforge.targets.aws.deployed import READER
from clusterforge.targets.aws.efa import node_facts
from clusterforge.targets.aws.section import aws_section
from clusterforge.targets.aws.software_pins import PIN_VARS

PROJECT_DIR = Path("stacks") / "aws"  # the Pulumi project, from the directory clusterforge runs in


def files(ctx: RenderInput) -> dict[str, str]:
    """The stack config, and what the stack builds resource by resource (pulumi/resources.yaml, for `diff`)."""
    from clusterforge.targets.aws import cloud_resources, stack_config

    return stack_config.render(ctx) | cloud_resources.render(ctx)


def group_vars(cluster: Cluster) -> dict[str, Any]:
    """The region every node runs in (all.yml), and on the baked image the venv whose Python (pydantic 2, boto3)
    runs the controller's power-save programs."""
    from clusterforge.targets.aws.userdata_boot import VENV

    aws = aws_section(cluster)
    if aws is None:
        return {}
    return {"aws_region": aws.region} | ({"slurm_power_save_python": f"{VENV}/bin/python"} if aws.ami is None else {})


RENDER = RenderPart(files=files, node_facts=node_facts, group_vars=group_vars, project_dir=PROJECT_DIR,
                    outputs=READER, pin_vars=PIN_VARS)
