"""IAM policy documents for the nodes (pure): SSM for access, and only this cluster's buckets for data."""

from __future__ import annotations

from typing import Any

from clusterforge.targets.aws.arn import bucket_arn, ec2_principal, partition
from clusterforge.targets.aws.crossguard.tokens import PLACEMENT_OPT_OUT_TAG
from clusterforge.targets.aws.design import DataRepository
from clusterforge.targets.aws.powersave import BATCH_TAG, CLUSTER_TAG, GROUP_TAG

CHECKPOINT_OBJECT_ACTIONS = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload",
                             "s3:ListMultipartUploadParts"]
DATA_OBJECT_ACTIONS = ["s3:GetObject"]  # datasets are read; the file system imports them
BUCKET_ACTIONS = ["s3:ListBucket", "s3:GetBucketLocation"]
KMS_ACTIONS = ["kms:Decrypt", "kms:GenerateDataKey"]


def assume_role(region: str) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": ec2_principal(region)}, "Action": "sts:AssumeRole"}]}


def bucket_access(region: str, checkpoint_bucket: str | None, data: DataRepository | None,
                  kms_key_arn: str | None) -> dict[str, Any]:
    """Read-write on the checkpoint bucket, read on the data repository prefix; nothing else in S3."""
    statements: list[dict[str, Any]] = []
    if checkpoint_bucket is not None:
        arn = bucket_arn(region, checkpoint_bucket)
        statements += [{"Sid": "CheckpointBucket", "Effect": "Allow", "Action": BUCKET_ACTIONS, "Resource": arn},
                       {"Sid": "CheckpointObjects", "Effect": "Allow", "Action": CHECKPOINT_OBJECT_ACTIONS,
                        "Resource": f"{arn}/*"}]
    if data is not None:
        arn = bucket_arn(region, data.bucket)
        listing: dict[str, Any] = {"Sid": "DataList", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": arn}
        if data.prefix:
            listing["Condition"] = {"StringLike": {"s3:prefix": [f"{data.prefix}*"]}}
        statements += [{"Sid": "DataBucket", "Effect": "Allow", "Action": "s3:GetBucketLocation", "Resource": arn},
                       listing, {"Sid": "DataObjects", "Effect": "Allow", "Action": DATA_OBJECT_ACTIONS,
                                 "Resource": f"{arn}/{data.prefix}*"}]
    if kms_key_arn is not None:
        statements.append({"Sid": "ClusterKey", "Effect": "Allow", "Action": KMS_ACTIONS, "Resource": kms_key_arn})
    return {"Version": "2012-10-17", "Statement": statements}


def tls_only(bucket: str, region: str) -> dict[str, Any]:
    """Bucket policy: refuse any request not made over TLS."""
    arn = bucket_arn(region, bucket)
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
        "Resource": [arn, f"{arn}/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}


LAUNCH_ACTIONS = ["ec2:CreateFleet", "ec2:RunInstances"]  # CreateFleet `instant` runs instances as the caller
DESCRIBE_ACTIONS = ["ec2:DescribeInstances", "ec2:DescribeInstanceStatus", "ec2:DescribeLaunchTemplates",
                    "ec2:DescribeLaunchTemplateVersions", "ec2:DescribeCapacityReservations"]
TAGGED_AT_LAUNCH = ["instance", "volume", "network-interface", "fleet"]
CREATE_ACTIONS = ["CreateFleet", "RunInstances"]  # ec2:CreateAction holds the API action's name, without `ec2:`
# The tag keys a launch may carry: what the resume program's CreateFleet tags (Ec2Provider._request: cluster, group,
# batch) and what the pools' launch templates tag their instances, volumes and interfaces with
# (components/launch_template: cluster, pool, role, the placement opt-out), which EC2 applies at launch too.
LAUNCH_TAG_KEYS = sorted({CLUSTER_TAG, GROUP_TAG, BATCH_TAG, "clusterforge:pool", "clusterforge:role",
                          PLACEMENT_OPT_OUT_TAG})


def power_save_access(region: str, cluster: str, node_role_arn: str) -> dict[str, Any]:
    """What the controller's power-save programs (clusterforge/powersave) call: launch from the pools' templates,
    tag at launch, terminate and describe this cluster's instances, and pass the nodes' role to them. Naming the
    instances takes no EC2 request: each batch's instance -> node map is an object in the boot bucket
    (boot_access.controller_boot lets the controller write it). Describe* takes no resource-level permissions
    (EC2's Actions, resources and condition keys page).

    Every instance this role makes carries this cluster's tag, and it can give no instance another cluster's:
    - an instance is launched (RunInstances, and CreateFleet, whose `instant` fleet is also authorized as the
      caller's RunInstances) only with `clusterforge:cluster` = this cluster in the request;
    - no instance, volume, network interface or fleet is launched with another value of that tag, or with a tag key
      outside LAUNCH_TAG_KEYS (aws:TagKeys);
    - only from a launch template tagged as this cluster's: another cluster's template tags its instances with its
      own cluster, and a non-instant fleet's instances get the template's tags from EC2's own role, not the caller;
    - tags are applied only at launch (ec2:CreateAction), with this cluster's tag present and those keys only; never
      to an existing resource (the programs tag nothing after launch: names are the batches' maps).
    Otherwise one cluster's controller could plant an instance tagged as another cluster's node, which that
    cluster's resume would take for its own (its real node never started, its slurmctld talking to a stranger's
    machine). Terminating is limited to this cluster's instances too."""
    ec2 = f"arn:{partition(region)}:ec2:{region}:*"
    own = {f"aws:ResourceTag/{CLUSTER_TAG}": cluster}
    asked = {f"aws:RequestTag/{CLUSTER_TAG}": cluster}
    tagged = [f"{ec2}:{kind}/*" for kind in TAGGED_AT_LAUNCH]
    beside = [arn for arn in tagged if not arn.endswith(":instance/*")]  # tagged if at all (the two above: always)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "Launch", "Effect": "Allow", "Action": LAUNCH_ACTIONS, "Resource": "*"},
        {"Sid": "LaunchOnlyThisClustersInstances", "Effect": "Deny", "Action": "ec2:RunInstances",
         "Resource": f"{ec2}:instance/*", "Condition": {"StringNotEquals": asked}},
        {"Sid": "FleetOnlyThisClustersInstances", "Effect": "Deny", "Action": "ec2:CreateFleet",
         "Resource": f"{ec2}:instance/*", "Condition": {"StringNotEquals": asked}},
        {"Sid": "LaunchNoOtherClustersTag", "Effect": "Deny", "Action": LAUNCH_ACTIONS, "Resource": beside,
         "Condition": {"Null": {f"aws:RequestTag/{CLUSTER_TAG}": "false"}, "StringNotEquals": asked}},
        {"Sid": "LaunchOnlyTheProgramsTagKeys", "Effect": "Deny", "Action": LAUNCH_ACTIONS, "Resource": tagged,
         "Condition": {"ForAnyValue:StringNotEquals": {"aws:TagKeys": LAUNCH_TAG_KEYS}}},
        {"Sid": "LaunchOnlyThisClustersTemplates", "Effect": "Deny", "Action": LAUNCH_ACTIONS,
         "Resource": f"{ec2}:launch-template/*", "Condition": {"StringNotEquals": own}},
        {"Sid": "TagAtLaunch", "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": tagged,
         "Condition": {"StringEquals": {"ec2:CreateAction": CREATE_ACTIONS, **asked},  # absent: no match
                       "ForAllValues:StringEquals": {"aws:TagKeys": LAUNCH_TAG_KEYS}}},
        {"Sid": "TerminateOwnInstances", "Effect": "Allow", "Action": "ec2:TerminateInstances",
         "Resource": f"{ec2}:instance/*", "Condition": {"StringEquals": own}},
        {"Sid": "Describe", "Effect": "Allow", "Action": DESCRIBE_ACTIONS, "Resource": "*"},
        {"Sid": "PassNodeRole", "Effect": "Allow", "Action": "iam:PassRole", "Resource": node_role_arn,
         "Condition": {"StringEquals": {"iam:PassedToService": ec2_principal(region)}}}]}
