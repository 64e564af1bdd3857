"""The nodes' IAM role: Session Manager (instead of SSH keys) and this cluster's buckets, nothing more; the
controller's, which adds what the power-save programs call (launch, name, terminate this cluster's instances); and
the Image Builder instance's role, which bakes the node image (components/image.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.arn import managed_policy
from clusterforge.targets.aws.design import DataRepository
from clusterforge.targets.aws.policy_documents import assume_role, bucket_access

SSM_POLICY = "AmazonSSMManagedInstanceCore"
IMAGE_BUILDER_POLICY = "EC2InstanceProfileForImageBuilder"  # AWS's managed policy for Image Builder instances
IAM_PATH = "/clusterforge/"  # lets the deploy role's iam:PassRole and iam:Create* be scoped to role/clusterforge/*


@dataclass(frozen=True)
class NodeRoleArgs:
    cluster: str
    region: str
    checkpoint_bucket: pulumi.Input[str] | None = None
    data: DataRepository | None = None
    kms_key_arn: str | None = None
    extra_policies: tuple[str, ...] = ()  # the blueprint's aws.security.node_policies (SEC-004 reviews them)
    boot_policy: pulumi.Input[str] | None = None  # on the baked image: read the node config and the munge key
    power_save_policy: pulumi.Input[str] | None = None  # the controller's: policy_documents.power_save_access


def instance_role(name: str, region: str, description: str, opts: pulumi.ResourceOptions) -> aws.iam.Role:
    """A role EC2 instances assume, under IAM_PATH (the nodes' and the image build's)."""
    return aws.iam.Role(f"{name}-role", path=IAM_PATH, assume_role_policy=json.dumps(assume_role(region)),
                        description=description, opts=opts)


class NodeRole(pulumi.ComponentResource):
    role_name: pulumi.Output[str]
    role_arn: pulumi.Output[str]
    instance_profile_arn: pulumi.Output[str]

    def __init__(self, name: str, args: NodeRoleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:NodeRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = instance_role(name, args.region, f"clusterforge {args.cluster} nodes", child)
        aws.iam.RolePolicyAttachment(f"{name}-ssm", role=role.name,
                                     policy_arn=managed_policy(args.region, SSM_POLICY), opts=child)
        bucket = pulumi.Output.from_input(args.checkpoint_bucket) if args.checkpoint_bucket is not None else None
        document = (bucket.apply(lambda b: json.dumps(bucket_access(args.region, b, args.data, args.kms_key_arn)))
                    if bucket is not None else json.dumps(bucket_access(args.region, None, args.data,
                                                                        args.kms_key_arn)))
        aws.iam.RolePolicy(f"{name}-buckets", role=role.id, policy=document, opts=child)
        if args.boot_policy is not None:
            aws.iam.RolePolicy(f"{name}-boot", role=role.id, policy=args.boot_policy, opts=child)
        if args.power_save_policy is not None:
            aws.iam.RolePolicy(f"{name}-power-save", role=role.id, policy=args.power_save_policy, opts=child)
        for i, arn in enumerate(args.extra_policies):
            aws.iam.RolePolicyAttachment(f"{name}-extra-{i}", role=role.name, policy_arn=arn, opts=child)
        profile = aws.iam.InstanceProfile(f"{name}-profile", path=IAM_PATH, role=role.name, opts=child)
        self.role_name = role.name
        self.role_arn = role.arn
        self.instance_profile_arn = profile.arn
        self.register_outputs({"role_name": self.role_name, "instance_profile_arn": self.instance_profile_arn})


@dataclass(frozen=True)
class BuildRoleArgs:
    cluster: str
    region: str
    read_policy: pulumi.Input[str]  # the roles bundles (boot_access.build_read)


class BuildRole(pulumi.ComponentResource):
    """The Image Builder build instance's role: Session Manager (AWSTOE runs through it), AWS's Image Builder
    instance policy (logs, component downloads) and the roles bundles. Not the nodes' role: a build reads no
    munge key and writes no checkpoint."""

    instance_profile_name: pulumi.Output[str]

    def __init__(self, name: str, args: BuildRoleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:BuildRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = instance_role(name, args.region, f"clusterforge {args.cluster} image builds", child)
        for policy in (SSM_POLICY, IMAGE_BUILDER_POLICY):
            aws.iam.RolePolicyAttachment(f"{name}-{policy}", role=role.name,
                                         policy_arn=managed_policy(args.region, policy), opts=child)
        aws.iam.RolePolicy(f"{name}-roles-bundle", role=role.id, policy=args.read_policy, opts=child)
        profile = aws.iam.InstanceProfile(f"{name}-profile", path=IAM_PATH, role=role.name, opts=child)
        self.instance_profile_name = profile.name
        self.register_outputs({"instance_profile_name": self.instance_profile_name})
