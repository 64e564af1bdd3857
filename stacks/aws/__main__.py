"""clusterforge-aws: read the stack config, refuse a blueprint with policy errors, compose the cluster."""

import os
from pathlib import Path

import pulumi

from clusterforge.core.errors import ClusterforgeError
from clusterforge.targets.aws import guard
from clusterforge.targets.aws.program import build
from clusterforge.targets.aws.settings import PROJECT, StackSettings

HERE = Path(__file__).resolve().parent  # relative config paths are relative to this project
# The blueprint's folder for `blueprint` alone: in the PR workflow this trusted program previews the PR's
# blueprint (its copy of this folder), while the policy config, waivers and catalogs stay this checkout's.
BLUEPRINTS = Path(os.environ.get("CLUSTERFORGE_BLUEPRINT_DIR") or HERE)
config = pulumi.Config(PROJECT)


def path(key: str) -> Path | None:
    value = config.get(key)
    return HERE / value if value else None


def paths(key: str) -> tuple[Path, ...]:
    """A list of paths (`pulumi config set --path 'catalogs[0]' site.yaml`), or one path."""
    value = config.get_object(key)
    items = value if isinstance(value, list) else [value] if value else []
    return tuple(HERE / str(item) for item in items)


settings = StackSettings(
    blueprint=BLUEPRINTS / config.require("blueprint"), catalogs=paths("catalogs"), policy_config=path("policyConfig"),
    waivers=path("waivers"),
    nat_gateway=config.get_bool("natGateway") or False, package_mirror=config.get_bool("packageMirror") or False,
    kms_key_arn=config.get("kmsKeyArn") or None,
    controller_instance_type=config.get("controllerInstanceType") or StackSettings.controller_instance_type,
    ami_parameter=config.get("amiParameter") or StackSettings.ami_parameter,
    protect_data=config.get_bool("protectData") is not False,
    image_instance_type=config.get("imageInstanceType") or StackSettings.image_instance_type,
    controller_address=config.get("controllerAddress") or None,
    ami_parameter_arm64=config.get("amiParameterArm64") or None,
    image_instance_type_arm64=config.get("imageInstanceTypeArm64") or StackSettings.image_instance_type_arm64)
try:
    checked = guard.check(settings)
    built = build(checked.loaded, settings, checked.analysis.plan)
except ClusterforgeError as error:  # a user's mistake: the findings, not a traceback
    raise pulumi.RunError(f"clusterforge refuses to deploy {settings.blueprint.name}:\n{error}") from None
for finding in checked.warnings:
    pulumi.log.warn(finding.render())
for key, value in built.outputs.items():
    pulumi.export(key, value)
