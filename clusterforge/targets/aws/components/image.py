"""The node image: EC2 Image Builder bakes the roles' `install` steps into an AMI during `pulumi up`.

Resources: a private bucket with the roles bundle (one object per digest) and the node config; the build
instance's role; one infrastructure configuration per CPU architecture of the images (the stack's subnet and
cluster security group, a build instance of that architecture); and per image (`bake.ImageDesign`) a component, a
recipe on its architecture's base AMI (x86_64: the stack's; arm64: `NodeConfig.parents`), and an
`imagebuilder.Image`, whose AMI the pools' launch templates use.

Component and recipe names carry `bake.bake_hash` (Image Builder versions are immutable, so a changed document
must be a new name): a role's install step, a pin or the parent AMI bakes again; a node count does not.
Replaced images keep their AMIs (Image Builder's DeleteImage leaves them), so running nodes keep theirs.

The munge key is no resource here: the first controller to boot makes it (boot_access, userdata_boot), so that
neither the program nor its state ever holds it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.targets.aws.bake import ImageDesign, NodeConfig, bake_hash, component_document, vars_key, vars_text
from clusterforge.targets.aws.boot_access import (
    CONFIG_KEY,
    ROLES_PREFIX,
    boot_read,
    build_read,
    controller_boot,
    munge_parameter_name,
)
from clusterforge.targets.aws.components.bucket import PREFIX_CHARS, keep_private
from clusterforge.targets.aws.components.identity import BuildRole, BuildRoleArgs
from clusterforge.targets.aws.design import ClusterDesign
from clusterforge.targets.aws.image_bundle import config_bundle, digest, roles_bundle
from clusterforge.targets.aws.settings import DEFAULT_ARCHITECTURE
from clusterforge.targets.aws.userdata_boot import BootSource

RECIPE_VERSION = "1.0.0"  # the hash in the name tells bakes apart; Image Builder wants a semantic version too
BAKE_TIMEOUT = "180m"  # drivers and libraries from source on a fresh parent: an hour is common, three is the bound


@dataclass(frozen=True)
class NodeImageArgs:
    design: ClusterDesign
    config: NodeConfig
    parent_image: pulumi.Input[str]  # the stack's base AMI (compute.image)
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    instance_type: str
    kms_key_arn: str | None = None
    egress: bool = False  # the stack has a NAT gateway (a bake without a route is refused: bake.check_route)
    roles: bytes | None = None  # the roles bundle (image_bundle.roles_bundle() of this checkout unless given)


def ami(resources: Sequence[aws.imagebuilder.outputs.ImageOutputResource]) -> str:
    """The AMI a finished build made (one: the image has no distribution configuration of other regions)."""
    amis = resources[0].amis if resources else None
    image = amis[0].image if amis else None
    if image is None:
        raise ClusterforgeError(Problem("the image build reported no AMI", path="imagebuilder.Image",
                                        hint="see the build's log in the Image Builder console"))
    return image


class NodeImage(pulumi.ComponentResource):
    config: NodeConfig
    image_ids: dict[str, pulumi.Output[str]]  # image key (bake.ImageDesign.key) -> AMI id
    boot: pulumi.Output[BootSource]
    node_policy: pulumi.Output[str]  # what the node role adds: boot_access.boot_read
    controller_policy: pulumi.Output[str]  # the controllers' role: boot_access.controller_boot

    def __init__(self, name: str, args: NodeImageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:NodeImage", name, None, opts)
        design = args.design
        self.config = args.config
        tags = design.tags()
        child = pulumi.ResourceOptions(parent=self)
        bucket = aws.s3.Bucket(f"{name}-bucket", bucket_prefix=f"{design.name[:PREFIX_CHARS]}-boot-",
                               force_destroy=True, tags=tags | {"Name": f"{design.name}-boot"}, opts=child)
        keep_private(name, bucket, design.region, self)
        roles = args.roles if args.roles is not None else roles_bundle()
        roles_key = f"{ROLES_PREFIX}{digest(roles)[:16]}.tar.gz"
        bundle = aws.s3.BucketObjectv2(f"{name}-roles", bucket=bucket.id, key=roles_key,
                                       content_base64=base64.b64encode(roles).decode(),
                                       content_type="application/gzip", tags=tags, opts=child)
        aws.s3.BucketObjectv2(f"{name}-config", bucket=bucket.id, key=CONFIG_KEY,
                              content_base64=base64.b64encode(config_bundle(args.config.files)).decode(),
                              content_type="application/gzip", tags=tags, opts=child)
        builder = BuildRole(f"{name}-build", BuildRoleArgs(
            design.name, design.region, bucket.bucket.apply(lambda b: json.dumps(build_read(design.region, b)))),
            child)
        infrastructures = {arch: self._infrastructure(name, arch, args, builder.instance_profile_name)
                           for arch in dict.fromkeys(image.architecture for image in args.config.images)}
        url = bucket.bucket.apply(lambda b: f"s3://{b}/{roles_key}")
        self.image_ids = {image.key: self._image(name, image, design, url, self._parent(image, args),
                                                 infrastructures[image.architecture], bundle, bucket)
                          for image in args.config.images}
        region, cluster, key = design.region, design.name, args.kms_key_arn
        self.boot = bucket.bucket.apply(
            lambda b: BootSource(region, b, CONFIG_KEY, munge_parameter_name(cluster), key))
        self.node_policy = bucket.bucket.apply(lambda b: json.dumps(boot_read(region, b, cluster)))
        self.controller_policy = bucket.bucket.apply(lambda b: json.dumps(controller_boot(region, b, cluster, key)))
        self.register_outputs({"image_ids": self.image_ids})

    def _infrastructure(self, name: str, arch: str, args: NodeImageArgs,
                        profile: pulumi.Output[str]) -> pulumi.Output[str]:
        """Where an architecture's images are built: the stack's subnet, a build instance of that architecture
        (x86_64 keeps the names it had before there were others)."""
        design = args.design
        tags = design.tags()
        default = arch == DEFAULT_ARCHITECTURE
        instance_type = args.instance_type if default else args.config.parents[arch].build_instance_type
        infrastructure = aws.imagebuilder.InfrastructureConfiguration(
            f"{name}-infrastructure" if default else f"{name}-infrastructure-{arch}",
            name=f"{design.name}-bake" if default else f"{design.name}-bake-{arch}",
            description=f"clusterforge {design.name}: builds the node image" + ("" if default else f" ({arch})"),
            instance_profile_name=profile, instance_types=[instance_type],
            subnet_id=args.subnet_id, security_group_ids=[args.security_group_id],
            terminate_instance_on_failure=True,
            instance_metadata_options=aws.imagebuilder.InfrastructureConfigurationInstanceMetadataOptionsArgs(
                http_tokens="required", http_put_response_hop_limit=1),
            resource_tags=tags, tags=tags, opts=pulumi.ResourceOptions(parent=self))
        return infrastructure.arn

    def _parent(self, image: ImageDesign, args: NodeImageArgs) -> pulumi.Output[str]:
        """The image's parent AMI: the stack's base image for x86_64, else its architecture's SSM parameter."""
        if image.architecture == DEFAULT_ARCHITECTURE:
            return pulumi.Output.from_input(args.parent_image)
        parameter = args.config.parents[image.architecture].parameter
        return aws.ssm.get_parameter_output(name=parameter, opts=pulumi.InvokeOutputOptions(parent=self)).value

    def _image(self, name: str, image: ImageDesign, design: ClusterDesign, url: pulumi.Output[str],
               parent: pulumi.Output[str], infrastructure: pulumi.Output[str],
               bundle: aws.s3.BucketObjectv2, bucket: aws.s3.Bucket) -> pulumi.Output[str]:
        tags = design.tags() | {"clusterforge:image": image.key}
        text = vars_text(image.bake_vars)
        key = vars_key(image.key, text)
        bake_vars = aws.s3.BucketObjectv2(f"{name}-{image.key}-vars", bucket=bucket.id, key=key,
                                          content_base64=base64.b64encode(text.encode()).decode(),
                                          content_type="text/yaml", tags=tags, opts=pulumi.ResourceOptions(parent=self))
        document = pulumi.Output.all(url, bucket.bucket).apply(
            lambda pair: component_document(f"{design.name}-{image.key}", str(pair[0]), f"s3://{pair[1]}/{key}"))
        named = pulumi.Output.all(document, parent).apply(
            lambda pair: f"{design.name}-{image.key}-{bake_hash(str(pair[0]), str(pair[1]))}")
        child = pulumi.ResourceOptions(parent=self)
        component = aws.imagebuilder.Component(
            f"{name}-{image.key}-component", name=named, version=RECIPE_VERSION, platform="Linux", data=document,
            description=f"clusterforge {design.name}: the roles' install steps", tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[bundle, bake_vars]))
        recipe = aws.imagebuilder.ImageRecipe(
            f"{name}-{image.key}-recipe", name=named, version=RECIPE_VERSION, parent_image=parent,
            components=[aws.imagebuilder.ImageRecipeComponentArgs(component_arn=component.arn)],
            description=f"clusterforge {design.name} pools {', '.join(image.pools)}", ami_tags=tags, tags=tags,
            opts=child)
        baked = aws.imagebuilder.Image(
            f"{name}-{image.key}", image_recipe_arn=recipe.arn, infrastructure_configuration_arn=infrastructure,
            image_tests_configuration=aws.imagebuilder.ImageImageTestsConfigurationArgs(image_tests_enabled=False),
            tags=tags, opts=pulumi.ResourceOptions(parent=self, custom_timeouts=pulumi.CustomTimeouts(
                create=BAKE_TIMEOUT)))
        return baked.output_resources.apply(ami)

    def ami_for(self, pool: str) -> pulumi.Output[str]:
        """The AMI the pool's nodes boot."""
        return self.image_ids[self.config.image_of(pool)]
