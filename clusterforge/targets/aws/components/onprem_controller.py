"""The on-prem controller's AWS identity (a hybrid, docs/hybrid.md): an IAM user with what the controller's role
has on AWS (policy_documents.power_save_access: launch from this cluster's templates, name and terminate its
instances, pass the nodes' role to them; and, on the baked image, boot_access.controller_boot: create the munge
key parameter once), and nothing else.

A user, not a role: a server in the hall has no instance profile, and the power-save programs call EC2 as
`slurm` with whatever credentials boto3 finds for that user (docs/hybrid.md). The stack makes no access key: its
secret would sit in the Pulumi state, which every role that previews the stack can decrypt. The operator makes
one (`aws iam create-access-key --user-name <controller.iam_user>`) and puts it in the slurm user's ~/.aws.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.components.identity import IAM_PATH


def user_name(cluster: str) -> str:
    """`<cluster>-controller`: at most 51 characters for a 40-character cluster name (IAM allows 64)."""
    return f"{cluster}-controller"


@dataclass(frozen=True)
class ControllerUserArgs:
    cluster: str
    power_save_policy: pulumi.Input[str]  # policy_documents.power_save_access
    boot_policy: pulumi.Input[str] | None = None  # boot_access.controller_boot, when the stack bakes the image


class ControllerUser(pulumi.ComponentResource):
    user_name: pulumi.Output[str]
    user_arn: pulumi.Output[str]

    def __init__(self, name: str, args: ControllerUserArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:ControllerUser", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        user = aws.iam.User(f"{name}-user", name=user_name(args.cluster), path=IAM_PATH, opts=child)
        aws.iam.UserPolicy(f"{name}-power-save", user=user.name, policy=args.power_save_policy, opts=child)
        if args.boot_policy is not None:
            aws.iam.UserPolicy(f"{name}-boot", user=user.name, policy=args.boot_policy, opts=child)
        self.user_name = user.name
        self.user_arn = user.arn
        self.register_outputs({"user_name": self.user_name, "user_arn": self.user_arn})
