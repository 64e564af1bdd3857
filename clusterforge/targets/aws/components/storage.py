"""Storage: the checkpoint bucket, and FSx for Lustre when the blueprint asks for one."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from clusterforge.targets.aws.components.bucket import CheckpointBucket, CheckpointBucketArgs
from clusterforge.targets.aws.components.lustre import Lustre, LustreArgs
from clusterforge.targets.aws.design import ClusterDesign


@dataclass(frozen=True)
class StorageArgs:
    design: ClusterDesign
    subnet_id: pulumi.Input[str]  # the file system's subnet: the AZ of the main compute pool
    lustre_security_group_id: pulumi.Input[str]
    kms_key_arn: str | None = None
    protect: bool = True


class Storage(pulumi.ComponentResource):
    checkpoints: CheckpointBucket
    lustre: Lustre | None

    def __init__(self, name: str, args: StorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:aws:Storage", name, None, opts)
        design = args.design
        self.checkpoints = CheckpointBucket(f"{name}-checkpoints", CheckpointBucketArgs(
            design.name, design.region, args.kms_key_arn, args.protect), pulumi.ResourceOptions(parent=self))
        self.lustre = None
        if design.lustre is not None:
            self.lustre = Lustre(f"{name}-lustre", LustreArgs(
                design.name, design.lustre, args.subnet_id, args.lustre_security_group_id, design.data,
                self.checkpoints.bucket, args.kms_key_arn, args.protect), pulumi.ResourceOptions(parent=self))
        self.register_outputs({"checkpoint_bucket": self.checkpoints.bucket})
