"""The munge key on the baked image, as a booting node's fetch step makes and reads it, against moto's SSM and S3
(in-process; no traffic leaves the machine): the first controller makes it once, a second controller and every
node read the same key, a node waits for a controller that has not made it yet and gives up with a reason."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")

from clusterforge.targets.aws.boot_access import CONFIG_KEY, munge_parameter_name  # noqa: E402
from clusterforge.targets.aws.image_bundle import config_bundle  # noqa: E402
from clusterforge.targets.aws.userdata_boot import _FETCH  # noqa: E402

REGION = "us-east-1"
BUCKET = "nlp-p5-boot-test"
PARAMETER = munge_parameter_name("nlp-p5")


@pytest.fixture
def cloud(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(key, "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with moto.mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=CONFIG_KEY, Body=config_bundle({"slurm/slurm.conf": "ClusterName=nlp-p5\n"}))
        yield


def boot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, role: str, wait_s: float = 30, kms: str = "") -> str:
    """Run the fetch step as the boot script does (its environment from node.env and boot_env), on a node of
    `role`; the munge key it leaves for Ansible."""
    secrets = tmp_path / f"{role}-{len(list(tmp_path.iterdir()))}.yml"
    env = {"CLUSTERFORGE_REGION": REGION, "CLUSTERFORGE_BOOT_BUCKET": BUCKET, "CLUSTERFORGE_BOOT_CONFIG": CONFIG_KEY,
           "CLUSTERFORGE_MUNGE_PARAMETER": PARAMETER, "CLUSTERFORGE_CONFIG_DIR": str(tmp_path / "config"),
           "CLUSTERFORGE_ROLE": role, "CLUSTERFORGE_MUNGE_WAIT_S": str(wait_s), "SECRETS": str(secrets)}
    if kms:
        env["CLUSTERFORGE_MUNGE_KMS_KEY"] = kms
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    exec(compile(_FETCH, "clusterforge-boot-fetch", "exec"), {})
    assert (tmp_path / "config" / "slurm" / "slurm.conf").read_text() == "ClusterName=nlp-p5\n"
    assert oct(secrets.stat().st_mode & 0o777) == "0o400"
    found = re.fullmatch(r"munge_key: '([A-Za-z0-9_-]+)'\n", secrets.read_text())
    assert found, "the secrets file holds one key"
    return found.group(1)


def test_the_first_controller_makes_the_key_and_every_other_node_reads_it(cloud: None, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    key = boot(tmp_path, monkeypatch, "controller")
    assert len(key) == 128
    made = boto3.client("ssm", region_name=REGION).get_parameter(Name=PARAMETER, WithDecryption=True)["Parameter"]
    assert made["Type"] == "SecureString" and made["Value"] == key and made["Version"] == 1
    assert boot(tmp_path, monkeypatch, "controller") == key  # a backup controller: never a second key
    assert boot(tmp_path, monkeypatch, "compute") == key
    assert boot(tmp_path, monkeypatch, "login") == key
    assert boto3.client("ssm", region_name=REGION).get_parameter(Name=PARAMETER)["Parameter"]["Version"] == 1


def test_a_node_waits_for_the_controller_and_then_gives_up_with_the_reason(cloud: None, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit, match="no munge key: no controller has made it"):
        boot(tmp_path, monkeypatch, "compute", wait_s=0.2)
    assert not list(tmp_path.glob("compute-*.yml"))  # nothing left for Ansible


def test_the_key_is_encrypted_with_the_stacks_key(cloud: None, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    kms = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["Arn"]
    boot(tmp_path, monkeypatch, "controller", kms=kms)
    [described] = boto3.client("ssm", region_name=REGION).describe_parameters()["Parameters"]
    assert described["KeyId"] == kms


def test_a_key_of_another_form_is_refused(cloud: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    boto3.client("ssm", region_name=REGION).put_parameter(Name=PARAMETER, Type="SecureString",
                                                          Value="short'\nx: y")
    with pytest.raises(SystemExit, match="not hold a key of the expected form"):
        boot(tmp_path, monkeypatch, "controller")
    assert os.environ["CLUSTERFORGE_ROLE"] == "controller"


def test_the_script_waits_half_an_hour_unless_told_otherwise() -> None:
    assert 'env.get("CLUSTERFORGE_MUNGE_WAIT_S", "1800")' in _FETCH and "token_urlsafe(96)" in _FETCH
    assert "@" not in _FETCH  # every placeholder filled in
