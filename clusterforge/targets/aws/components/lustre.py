"""FSx for Lustre from the blueprint's figures, linked to S3 by data repository associations.

PERSISTENT_2 links S3 only through associations (no import_path): the data repository appears read-mostly
under /data, and the checkpoint bucket under /checkpoints with automatic export, so a checkpoint written at
Lustre speed reaches versioned S3 without the job waiting for it.

An Intelligent-Tiering file system (PERSISTENT_2 only) has no storage capacity and no throughput per TiB: it takes
`throughput_capacity` (MB/s for the whole file system), `data_read_cache_configuration` (required with that
storage type) and USER_PROVISIONED metadata IOPS (pulumi-aws 7, aws.fsx.LustreFileSystem: "INTELLIGENT_TIERING
requires data_read_cache_configuration and metadata_configuration to be set").
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from clusterforge.targets.aws.design import DataRepository
from clusterforge.targets.aws.fsx_model import FsxLustre
from clusterforge.targets.aws.fsx_tiering import read_cache as tiering_read_cache

PERSISTENT_2 = "PERSISTENT_2"
DATA_PATH = "/data"
CHECKPOINT_PATH = "/checkpoints"
ALL_EVENTS = ["NEW", "CHANGED", "DELETED"]
AUTO_IMPORT = "NEW_CHANGED_DELETED"  # import_path file systems (not SCRATCH_1)


@dataclass(frozen=True)
class LustreArgs:
    cluster: str
    fsx: FsxLustre
    subnet_id: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    data: DataRepository | None = None
    checkpoint_bucket: pulumi.Input[str] | None = None
    kms_key_arn: str | None = None
    protect: bool = True


def read_cache(fsx: FsxLustre) -> aws.fsx.LustreFileSystemDataReadCacheConfigurationArgs | None:
    """An Intelligent-Tiering file system's SSD read cache: the blueprint's, else sized by AWS in proportion to the
    throughput capacity; None for SSD and HDD storage, which have none."""
    cache = tiering_read_cache(fsx)
    if cache is None:
        return None
    mode, size = cache
    return aws.fsx.LustreFileSystemDataReadCacheConfigurationArgs(sizing_mode=mode, size=size)


def metadata(fsx: FsxLustre) -> aws.fsx.LustreFileSystemMetadataConfigurationArgs | None:
    """PERSISTENT_2 metadata: provisioned IOPS when the blueprint names them, else AWS scales them (SSD only:
    Intelligent-Tiering takes its IOPS as given, STO-004 requires them)."""
    if fsx.deployment_type != PERSISTENT_2:
        return None
    if fsx.metadata_iops is not None:
        return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="USER_PROVISIONED", iops=fsx.metadata_iops)
    return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")


def association(name: str, file_system_id: pulumi.Input[str], path: str, repository: pulumi.Input[str],
                export: bool, opts: pulumi.ResourceOptions) -> aws.fsx.DataRepositoryAssociation:
    s3 = aws.fsx.DataRepositoryAssociationS3Args(
        auto_import_policy=aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(events=ALL_EVENTS),
        auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(events=ALL_EVENTS)
        if export else None)
    return aws.fsx.DataRepositoryAssociation(name, file_system_id=file_system_id, file_system_path=path,
                                             data_repository_path=repository, batch_import_meta_data_on_create=True,
                                             s3=s3, opts=opts)


class Lustre(pulumi.ComponentResource):
    file_system_id: pulumi.Output[str]
    dns_name: pulumi.Output[str]
    mount_name: pulumi.Output[str]
    data_path: str | None
    checkpoint_path: str | None

    def __init__(self, name: str, args: LustreArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:Lustre", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        fsx = args.fsx
        persistent = fsx.deployment_type.startswith("PERSISTENT")
        p2 = fsx.deployment_type == PERSISTENT_2
        linked = args.data is not None and not p2
        fs = aws.fsx.LustreFileSystem(
            f"{name}-fs", deployment_type=fsx.deployment_type,
            storage_capacity=None if fsx.elastic else fsx.capacity_gib, storage_type=fsx.storage_type,
            per_unit_storage_throughput=fsx.throughput_mb_s_per_tib if persistent and not fsx.elastic else None,
            throughput_capacity=fsx.throughput_capacity_mb_s if fsx.elastic else None,
            data_read_cache_configuration=read_cache(fsx),
            data_compression_type=fsx.data_compression, file_system_type_version=fsx.lustre_version,
            metadata_configuration=metadata(fsx), subnet_ids=args.subnet_id,
            security_group_ids=[args.security_group_id], kms_key_id=args.kms_key_arn if persistent else None,
            import_path=args.data.url if linked and args.data is not None else None,
            auto_import_policy=AUTO_IMPORT if linked and fsx.deployment_type != "SCRATCH_1" else None,
            tags={"Name": args.cluster}, opts=pulumi.ResourceOptions(parent=self, protect=args.protect))
        self.data_path = DATA_PATH if p2 and args.data else ("/" if linked else None)
        self.checkpoint_path = CHECKPOINT_PATH if p2 and args.checkpoint_bucket is not None else None
        if p2 and args.data is not None:
            association(f"{name}-data", fs.id, DATA_PATH, args.data.url, False, child)
        if p2 and args.checkpoint_bucket is not None:
            url = pulumi.Output.from_input(args.checkpoint_bucket).apply(lambda b: f"s3://{b}/")
            association(f"{name}-checkpoints", fs.id, CHECKPOINT_PATH, url, True, child)
        self.file_system_id = fs.id
        self.dns_name = fs.dns_name
        self.mount_name = fs.mount_name
        self.register_outputs({"file_system_id": self.file_system_id, "dns_name": self.dns_name,
                               "mount_name": self.mount_name})
