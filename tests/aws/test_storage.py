"""Storage as the engine sees it: FSx for Lustre from the blueprint, S3 links, the checkpoint bucket."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.aws.blueprints import example, write
from tests.aws.conftest import Run, build_blueprint, build_example

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
BUCKET = "aws:s3/bucket:Bucket"
CHECKPOINTS = "storage-checkpoints-bucket"
KEY = "arn:aws:kms:us-east-1:111122223333:key/abcd"
Stack = Callable[..., Run]


def test_p5_file_system(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    fsx = rec.one(FSX)
    assert fsx.inputs == {
        "deploymentType": "PERSISTENT_2", "storageCapacity": 50400, "perUnitStorageThroughput": 250,
        "storageType": "SSD", "dataCompressionType": "LZ4", "fileSystemTypeVersion": "2.15",
        "metadataConfiguration": {"mode": "AUTOMATIC"}, "subnetIds": "network-private-use1-az4-id",
        "securityGroupIds": ["network-lustre-sg-id"], "tags": {"Name": "nlp-p5"}}
    assert fsx.protect  # `pulumi destroy` cannot take the data with it unless the stack says so


def test_metadata_iops_and_a_customer_key(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["storage"]["lustre"]["metadata_iops"] = 6000
    fsx = stack(build_blueprint(write(tmp_path, data), kms_key_arn=KEY, protect_data=False)).recorder.one(FSX)
    assert fsx.inputs["metadataConfiguration"] == {"mode": "USER_PROVISIONED", "iops": 6000}
    assert fsx.inputs["kmsKeyId"] == KEY
    assert not fsx.protect


def test_scratch_takes_no_throughput_or_metadata(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["storage"]["lustre"] = {"mount": "/scratch", "capacity_gib": 2400, "deployment_type": "SCRATCH_2",
                                 "lustre_version": "2.15"}
    data["aws"]["data_bucket"] = "datasets"
    run = stack(build_blueprint(write(tmp_path, data), kms_key_arn=KEY))
    fsx = run.recorder.one(FSX).inputs
    assert fsx["deploymentType"] == "SCRATCH_2"
    for key in ("perUnitStorageThroughput", "metadataConfiguration", "kmsKeyId"):
        assert key not in fsx
    assert (fsx["importPath"], fsx["autoImportPolicy"]) == ("s3://datasets/", "NEW_CHANGED_DELETED")
    assert not run.recorder.of_type(DRA)  # only PERSISTENT_2 links S3 through associations here


def test_persistent_2_links_s3_through_associations(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["data_bucket"] = "s3://team-datasets/imagenet"
    run = stack(build_blueprint(write(tmp_path, data)))
    rec = run.recorder
    assert "importPath" not in rec.one(FSX).inputs
    links = {d.inputs["fileSystemPath"]: d.inputs for d in rec.of_type(DRA)}
    assert set(links) == {"/data", "/checkpoints"}
    assert all(link["fileSystemId"] == "storage-lustre-fs-id" for link in links.values())
    data_link = links["/data"]
    assert data_link["dataRepositoryPath"] == "s3://team-datasets/imagenet/"
    assert data_link["batchImportMetaDataOnCreate"] is True
    assert data_link["s3"] == {"autoImportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]}}
    bucket = rec.one(BUCKET, CHECKPOINTS).inputs["bucketPrefix"] + "20261121"
    checkpoints = links["/checkpoints"]
    assert checkpoints["dataRepositoryPath"] == f"s3://{bucket}/"
    assert checkpoints["s3"]["autoExportPolicy"] == {"events": ["NEW", "CHANGED", "DELETED"]}
    assert (run.value["lustre"]["data_path"], run.value["lustre"]["checkpoint_path"]) == ("/data", "/checkpoints")


def test_checkpoint_bucket_is_versioned_encrypted_private_and_tls_only(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    bucket = rec.one(BUCKET, CHECKPOINTS)
    assert bucket.inputs["bucketPrefix"] == "nlp-p5-ckpt-" and bucket.inputs["forceDestroy"] is False
    assert bucket.protect
    assert "versioning" not in bucket.inputs and "serverSideEncryptionConfiguration" not in bucket.inputs  # v7
    versioning = rec.one("aws:s3/bucketVersioning:BucketVersioning").inputs
    assert versioning == {"bucket": "storage-checkpoints-bucket-id", "versioningConfiguration": {"status": "Enabled"}}
    [rule] = rec.one("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
                     ).inputs["rules"]
    assert rule == {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms"}, "bucketKeyEnabled": True}
    block = rec.one("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
                    "storage-checkpoints-public-access").inputs
    assert all(block[k] is True for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls",
                                          "restrictPublicBuckets"))
    policy = rec.one("aws:s3/bucketPolicy:BucketPolicy", "storage-checkpoints-tls-only").inputs["policy"]
    [statement] = json.loads(policy)["Statement"]
    assert statement["Effect"] == "Deny" and statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_a_customer_key_encrypts_the_bucket(stack: Stack) -> None:
    rec = stack(build_example("aws-p5", kms_key_arn=KEY)).recorder
    [rule] = rec.one("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
                     ).inputs["rules"]
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY}


def test_no_file_system_without_fsx_in_the_blueprint(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    del data["storage"]
    del data["workload"]
    run = stack(build_blueprint(write(tmp_path, data)))
    assert not run.recorder.of_type(FSX) and not run.recorder.of_type(DRA)
    assert run.recorder.one(BUCKET, CHECKPOINTS) and "lustre" not in run.value
