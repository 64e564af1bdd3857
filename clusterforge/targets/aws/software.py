"""Target aws's software tables: what EFA needs on every stack (the aws-ofi-nccl plugin the stack's collectives
load, the EFA installer that bundles it, the oldest installer that drives each instance family's EFA devices). The
rows are data with a source each (data/software.yaml beside this file); SW-001 checks a cluster on AWS against them
(`software_checks.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from clusterforge.catalog.software import Release, RequiresRow, Row
from clusterforge.core.validation import expected


class AwsOfiNcclRow(RequiresRow):
    """A plugin release and the stack's pins it works with, in its release notes' words (`min_<pin>`,
    `<pin>_majors`: data/software.yaml)."""

    KEY = "aws_ofi_nccl"
    DOC = ("`aws_ofi_nccl`, `min_<pin>`, `<pin>_majors`",
           "on AWS: each pin the plugin's row names is no older than its `min_` and of a major its `_majors` lists")
    aws_ofi_nccl: Release


class EfaInstallerRow(Row):
    KEY = "efa_installer"
    AFTER = "aws_ofi_nccl"
    DOC = ("`efa_installer`, `aws_ofi_nccl`",
           "on AWS: the pinned plugin is the one the installer bundles (major.minor)")
    efa_installer: Release
    aws_ofi_nccl: Release = Field(description="the aws-ofi-nccl release the installer bundles")


INSTANCE_FAMILY = r"^[a-z][a-z0-9-]{0,30}$"
InstanceFamily = Annotated[str, StringConstraints(pattern=INSTANCE_FAMILY), Field(description=expected(
    INSTANCE_FAMILY, "an EC2 instance family, the type's name before the dot, e.g. p6-b300"))]


class EfaInstanceRow(Row):
    """The oldest EFA installer that drives an instance family's EFA devices (its kernel driver and libfabric)."""

    KEY, TABLE = "instance_family", "efa_instance"
    AFTER = "efa_installer"
    DOC = ("`instance_family`, `min_efa_installer`", "on AWS: the installer is no older than the oldest that drives "
           "the pool's instance family (the type's name before the dot, e.g. `p6-b300`)")
    instance_family: InstanceFamily
    min_efa_installer: Release


TABLES = (AwsOfiNcclRow, EfaInstallerRow, EfaInstanceRow)
