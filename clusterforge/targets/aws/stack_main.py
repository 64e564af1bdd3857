"""The Pulumi program of the `clusterforge-aws` project, as one function of the installed release.

`stacks/aws/__main__.py`, and the `__main__.py` of every project `clusterforge stack new aws` writes into a team's
own repository, is the same three lines: `run(Path(__file__).resolve().parent)`. So there is one program, the
release's, pinned by the project's requirements.txt; a project holds only its Pulumi.yaml, its stacks' config and
that call. `run` reads the stack config (relative paths start at the project's folder), refuses a blueprint with
unwaived policy errors before any resource is declared, composes the cluster and exports the outputs the inventory
is made from.
"""

from __future__ import annotations

import os
from pathlib import Path

import pulumi

from clusterforge.core.errors import ClusterforgeError
from clusterforge.targets.aws import guard
from clusterforge.targets.aws.program import build
from clusterforge.targets.aws.settings import PROJECT, StackSettings

# The blueprint's folder for `blueprint` alone: in the PR workflow the trusted program previews the PR's blueprint
# (its copy of the project's folder), while the policy config, waivers and catalogs stay the trusted checkout's.
BLUEPRINT_DIR = "CLUSTERFORGE_BLUEPRINT_DIR"


def read_settings(here: Path, config: pulumi.Config) -> StackSettings:
    """The stack config as settings; every path relative to `here`, the project's folder."""
    blueprints = Path(os.environ.get(BLUEPRINT_DIR) or here)

    def path(key: str) -> Path | None:
        value = config.get(key)
        return here / value if value else None

    def paths(key: str) -> tuple[Path, ...]:
        """A list of paths (`pulumi config set --path 'catalogs[0]' site.yaml`), or one path."""
        value = config.get_object(key)
        items = value if isinstance(value, list) else [value] if value else []
        return tuple(here / str(item) for item in items)

    return StackSettings(
        blueprint=blueprints / config.require("blueprint"), catalogs=paths("catalogs"),
        policy_config=path("policyConfig"), waivers=path("waivers"),
        nat_gateway=config.get_bool("natGateway") or False, package_mirror=config.get_bool("packageMirror") or False,
        kms_key_arn=config.get("kmsKeyArn") or None,
        controller_instance_type=config.get("controllerInstanceType") or StackSettings.controller_instance_type,
        ami_parameter=config.get("amiParameter") or StackSettings.ami_parameter,
        protect_data=config.get_bool("protectData") is not False,
        image_instance_type=config.get("imageInstanceType") or StackSettings.image_instance_type,
        controller_address=config.get("controllerAddress") or None,
        ami_parameter_arm64=config.get("amiParameterArm64") or None,
        image_instance_type_arm64=config.get("imageInstanceTypeArm64") or StackSettings.image_instance_type_arm64)


def run(here: Path) -> None:
    """The program for the project in `here`: its stack's cluster, or a refusal that lists the findings."""
    settings = read_settings(here, pulumi.Config(PROJECT))
    try:
        checked = guard.check(settings)
        built = build(checked.loaded, settings, checked.analysis.plan)
    except ClusterforgeError as error:  # a user's mistake: the findings, not a traceback
        raise pulumi.RunError(f"clusterforge refuses to deploy {settings.blueprint.name}:\n{error}") from None
    for finding in checked.warnings:
        pulumi.log.warn(finding.render())
    for key, value in built.outputs.items():
        pulumi.export(key, value)
