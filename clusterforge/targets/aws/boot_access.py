"""IAM policy documents for the baked image (pure): what the Image Builder instance and a booting node may read.

Both are read-only and name single objects or prefixes: a node reads the node config and the munge key and can
change neither, so a job on one node cannot rewrite what the next node runs as root at boot.
"""

from __future__ import annotations

from typing import Any

from clusterforge.targets.aws.arn import bucket_arn

ROLES_PREFIX = "roles/"  # the roles bundles, one object per digest
CONFIG_KEY = "node-config.tar.gz"


def build_read(region: str, bucket: str) -> dict[str, Any]:
    """The Image Builder instance: the roles bundles, nothing else of the bucket."""
    arn = bucket_arn(region, bucket)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "RolesBundle", "Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{arn}/{ROLES_PREFIX}*"}]}


def boot_read(region: str, bucket: str, munge_parameter_arn: str) -> dict[str, Any]:
    """A node at first boot: the node config object and the munge key parameter (decrypted with the AWS-managed
    aws/ssm key, or the stack's key, which the node role may already use)."""
    arn = bucket_arn(region, bucket)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "NodeConfig", "Effect": "Allow", "Action": "s3:GetObject", "Resource": f"{arn}/{CONFIG_KEY}"},
        {"Sid": "MungeKey", "Effect": "Allow", "Action": "ssm:GetParameter", "Resource": munge_parameter_arn}]}
