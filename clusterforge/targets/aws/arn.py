"""ARN partitions and service principals by region (China and GovCloud differ from the commercial cloud)."""

from __future__ import annotations


def partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def ec2_principal(region: str) -> str:
    return "ec2.amazonaws.com.cn" if region.startswith("cn-") else "ec2.amazonaws.com"


def bucket_arn(region: str, bucket: str) -> str:
    return f"arn:{partition(region)}:s3:::{bucket}"


def managed_policy(region: str, name: str) -> str:
    return f"arn:{partition(region)}:iam::aws:policy/{name}"
