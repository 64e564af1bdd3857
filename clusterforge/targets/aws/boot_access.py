"""IAM policy documents for the baked image (pure): what the Image Builder instance and a booting node may read,
and the one thing a booting controller may write.

A node reads the node config and the munge key and can change neither, so a job on one node cannot rewrite what
the next node runs as root at boot. The munge key is made by the first controller to boot (userdata_boot), never
by the program: a value the program made would sit in the Pulumi state, which every role that previews the stack
can decrypt. The controller may only create the parameter (`ssm:Overwrite` false), so not even it can replace a
key the cluster already uses, and no other node may create it first (a key planted before the controller's).
"""

from __future__ import annotations

from typing import Any

from clusterforge.targets.aws.arn import bucket_arn, partition
from clusterforge.targets.aws.powersave import PREFIX as NODE_MAP_PREFIX  # each batch's instance -> node map

ROLES_PREFIX = "roles/"  # the roles bundles, one object per digest
VARS_PREFIX = "bake-vars/"  # each image's build vars, one object per digest (bake.vars_key)
CONFIG_KEY = "node-config.tar.gz"


def build_read(region: str, bucket: str) -> dict[str, Any]:
    """The Image Builder instance: the roles bundles and the build vars, nothing else of the bucket."""
    arn = bucket_arn(region, bucket)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "RolesBundle", "Effect": "Allow", "Action": "s3:GetObject",
         "Resource": [f"{arn}/{ROLES_PREFIX}*", f"{arn}/{VARS_PREFIX}*"]}]}


def munge_parameter_name(cluster: str) -> str:
    return f"/clusterforge/{cluster}/munge-key"


def munge_parameter_arn(region: str, cluster: str) -> str:
    """The parameter's ARN in the stack's own account (a role reaches no other account's parameters)."""
    return f"arn:{partition(region)}:ssm:{region}:*:parameter{munge_parameter_name(cluster)}"


def boot_read(region: str, bucket: str, cluster: str) -> dict[str, Any]:
    """A node at first boot: the node config object, its launch batch's node map (its name, userdata_identify),
    and the munge key parameter (decrypted with the AWS-managed aws/ssm key, or the stack's key, which the node
    role may already use)."""
    arn = bucket_arn(region, bucket)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "NodeConfig", "Effect": "Allow", "Action": "s3:GetObject",
         "Resource": [f"{arn}/{CONFIG_KEY}", f"{arn}/{NODE_MAP_PREFIX}*"]},
        {"Sid": "MungeKey", "Effect": "Allow", "Action": "ssm:GetParameter",
         "Resource": munge_parameter_arn(region, cluster)}]}


def controller_boot(region: str, bucket: str, cluster: str, kms_key_arn: str | None) -> dict[str, Any]:
    """A controller: what every node reads, writing the node maps of the batches its resume program launches,
    and creating the munge key parameter once (never overwriting it), encrypted with the stack's key when it has
    one."""
    document = boot_read(region, bucket, cluster)
    document["Statement"].append({"Sid": "WriteNodeMaps", "Effect": "Allow", "Action": "s3:PutObject",
                                  "Resource": f"{bucket_arn(region, bucket)}/{NODE_MAP_PREFIX}*"})
    document["Statement"].append(
        {"Sid": "MakeMungeKeyOnce", "Effect": "Allow", "Action": "ssm:PutParameter",
         "Resource": munge_parameter_arn(region, cluster), "Condition": {"StringEquals": {"ssm:Overwrite": "false"}}})
    if kms_key_arn is not None:
        document["Statement"].append({"Sid": "EncryptMungeKey", "Effect": "Allow", "Action": "kms:Encrypt",
                                      "Resource": kms_key_arn})
    return document
