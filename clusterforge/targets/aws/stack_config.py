"""pulumi/Pulumi.<stack>.yaml for target aws: the stack (named after the cluster) reads the blueprint itself.

The blueprint path is written relative to the Pulumi project directory (`stacks/aws` under the directory
render ran in), because Pulumi runs the program there: `pulumi -C stacks/aws up --stack <cluster>
--config-file <DIR>/pulumi/Pulumi.<cluster>.yaml`.
"""

from __future__ import annotations

import os
from pathlib import Path

from clusterforge.render.yamlout import dump
from clusterforge.target_kernel.protocol import RenderInput
from clusterforge.targets.aws.section import aws_section

PROJECT = "clusterforge-aws"


def blueprint_path(blueprint: Path, stack_dir: Path) -> str:
    return Path(os.path.relpath(blueprint.resolve(), stack_dir.resolve())).as_posix()


def render(ctx: RenderInput) -> dict[str, str]:
    cluster = ctx.cluster
    aws = aws_section(cluster)
    if aws is None:
        return {}
    config = {"config": {"aws:region": aws.region,
                         f"{PROJECT}:blueprint": blueprint_path(Path(ctx.source), ctx.stack_dir)}}
    return {f"pulumi/Pulumi.{cluster.name}.yaml": ctx.header() + dump(config)}
