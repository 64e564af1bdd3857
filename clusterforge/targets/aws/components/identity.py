"""The nodes' IAM role: Session Manager (instead of SSH keys) and this cluster's buckets, nothing more."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.arn import managed_policy
from clusterforge.targets.aws.design import DataRepository
from clusterforge.targets.aws.policy_documents import assume_role, bucket_access

SSM_POLICY = "AmazonSSMManagedInstanceCore"
IAM_PATH = "/clusterforge/"  # lets the deploy role's iam:PassRole and iam:Create* be scoped to role/clusterforge/*


@dataclass(frozen=True)
class NodeRoleArgs:
    cluster: str
    region: str
    checkpoint_bucket: pulumi.Input[str] | None = None
    data: DataRepository | None = None
    kms_key_arn: str | None = None
    extra_policies: tuple[str, ...] = ()  # the blueprint's aws.security.node_policies (SEC-004 reviews them)


class NodeRole(pulumi.ComponentResource):
    role_name: pulumi.Output[str]
    instance_profile_arn: pulumi.Output[str]

    def __init__(self, name: str, args: NodeRoleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:NodeRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(f"{name}-role", path=IAM_PATH, assume_role_policy=json.dumps(assume_role(args.region)),
                            description=f"clusterforge {args.cluster} nodes", opts=child)
        aws.iam.RolePolicyAttachment(f"{name}-ssm", role=role.name,
                                     policy_arn=managed_policy(args.region, SSM_POLICY), opts=child)
        bucket = pulumi.Output.from_input(args.checkpoint_bucket) if args.checkpoint_bucket is not None else None
        document = (bucket.apply(lambda b: json.dumps(bucket_access(args.region, b, args.data, args.kms_key_arn)))
                    if bucket is not None else json.dumps(bucket_access(args.region, None, args.data,
                                                                        args.kms_key_arn)))
        aws.iam.RolePolicy(f"{name}-buckets", role=role.id, policy=document, opts=child)
        for i, arn in enumerate(args.extra_policies):
            aws.iam.RolePolicyAttachment(f"{name}-extra-{i}", role=role.name, policy_arn=arn, opts=child)
        profile = aws.iam.InstanceProfile(f"{name}-profile", path=IAM_PATH, role=role.name, opts=child)
        self.role_name = role.name
        self.instance_profile_arn = profile.arn
        self.register_outputs({"role_name": self.role_name, "instance_profile_arn": self.instance_profile_arn})
