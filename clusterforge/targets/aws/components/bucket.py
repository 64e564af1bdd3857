"""The checkpoint bucket: versioned (an overwritten checkpoint is recoverable), encrypted, private, TLS only."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.policy_documents import tls_only

PREFIX_CHARS = 26  # bucket_prefix may be 37 characters; leave room for "-ckpt-" (and the boot bucket's "-boot-")


@dataclass(frozen=True)
class CheckpointBucketArgs:
    cluster: str
    region: str
    kms_key_arn: str | None = None  # None: SSE-KMS with the AWS-managed aws/s3 key
    protect: bool = True


def keep_private(name: str, bucket: aws.s3.Bucket, region: str, parent: pulumi.Resource) -> None:
    """Every public access blocked, then a policy refusing requests without TLS (after the block: S3 refuses a
    bucket policy while public access settings are being changed). The checkpoint bucket and the node image's
    boot bucket share it."""
    block = aws.s3.BucketPublicAccessBlock(f"{name}-public-access", bucket=bucket.id, block_public_acls=True,
                                           block_public_policy=True, ignore_public_acls=True,
                                           restrict_public_buckets=True, opts=pulumi.ResourceOptions(parent=parent))
    aws.s3.BucketPolicy(f"{name}-tls-only", bucket=bucket.id,
                        policy=bucket.bucket.apply(lambda b: json.dumps(tls_only(b, region))),
                        opts=pulumi.ResourceOptions(parent=parent, depends_on=[block]))


class CheckpointBucket(pulumi.ComponentResource):
    bucket: pulumi.Output[str]
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: CheckpointBucketArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:CheckpointBucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = aws.s3.Bucket(f"{name}-bucket", bucket_prefix=f"{args.cluster[:PREFIX_CHARS]}-ckpt-",
                               force_destroy=False, tags={"Name": f"{args.cluster}-checkpoints"},
                               opts=pulumi.ResourceOptions(parent=self, protect=args.protect))
        aws.s3.BucketVersioning(f"{name}-versioning", bucket=bucket.id,
                                versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(
                                    status="Enabled"), opts=child)
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption", bucket=bucket.id,
            rules=[aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=(
                    aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="aws:kms", kms_master_key_id=args.kms_key_arn)),
                bucket_key_enabled=True)], opts=child)
        keep_private(name, bucket, args.region, self)
        self.bucket = bucket.bucket
        self.arn = bucket.arn
        self.register_outputs({"bucket": self.bucket, "arn": self.arn})
