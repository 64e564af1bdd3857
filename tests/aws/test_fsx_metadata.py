"""FSx for Lustre metadata IOPS (STO-004), in the blueprint check and in the CrossGuard pack.

AWS FSx API reference, CreateFileSystemLustreMetadataConfiguration, Iops: "For SSD file systems, valid values are
1500, 3000, 6000, 12000, and multiples of 12000 up to a maximum of 192000. For Intelligent-Tiering file systems,
valid values are 6000 and 12000." A value is only given in USER_PROVISIONED mode ("If you're using AUTOMATIC
mode, you cannot specify a value"), and the metadata configuration is a PERSISTENT_2 setting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.policies.builders import aws, found, messages
from tests.test_crossguard import LUSTRE, fsx, validate

VALID_SSD = [1500, 3000, 6000, 12000, 24000, 36000, 96000, 180000, 192000]
INVALID_SSD = [4500, 9000, 13000, 18000, 30000, 191000]


def blueprint(iops: int | None, deployment_type: str = "PERSISTENT_2", **lustre: Any) -> dict:
    data = aws()
    fs = data["storage"]["lustre"]
    fs["deployment_type"] = deployment_type
    if deployment_type.startswith("SCRATCH"):
        fs.pop("throughput_mb_s_per_tib")
    if iops is not None:
        fs["metadata_iops"] = iops
    fs.update(lustre)
    return data


def metadata(iops: Any, mode: str = "USER_PROVISIONED", **extra: Any) -> dict:
    return fsx(metadataConfiguration={"mode": mode, **({"iops": iops} if iops is not None else {})}, **extra)


@pytest.mark.parametrize("iops", VALID_SSD)
def test_valid_ssd_metadata_iops_pass_everywhere(iops: int) -> None:
    assert "STO-004" not in found(blueprint(iops), level=None)
    assert validate("STO-004", LUSTRE, metadata(iops)) == []


@pytest.mark.parametrize("iops", INVALID_SSD)
def test_other_values_fail_in_the_check_and_the_pack(iops: int) -> None:
    assert "STO-004" in found(blueprint(iops))
    [message] = messages(blueprint(iops), "STO-004")
    assert message.startswith(f"FSx metadata IOPS {iops:,} is not valid: SSD takes 1,500, 3,000, 6,000, 12,000 "
                              "or a multiple of 12,000 up to 192,000")
    [preview] = validate("STO-004", LUSTRE, metadata(iops))
    assert preview.startswith(message)  # one helper behind both


def test_4500_fails_the_cli_check(cli, tmp_path: Path) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(yaml.safe_dump(blueprint(4500), sort_keys=False))
    result = cli("check", path, "-f", "json")
    assert result.exit_code == 1
    [finding] = [f for f in json.loads(result.stdout)["findings"] if f["id"] == "STO-004"]
    assert finding["path"] == "storage.lustre.metadata_iops" and finding["level"] == "error"
    assert finding["hint"] == "use 3,000 or 6,000"


def test_above_192000_fails_in_the_check_and_the_pack(cli, tmp_path: Path) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(yaml.safe_dump(blueprint(204000), sort_keys=False))
    result = cli("check", path)
    assert result.exit_code == 2 and "storage.lustre.metadata_iops" in result.output
    assert len(validate("STO-004", LUSTRE, metadata(204000))) == 1


def test_no_metadata_iops_passes() -> None:
    assert "STO-004" not in found(blueprint(None), level=None)
    assert validate("STO-004", LUSTRE, fsx(metadataConfiguration={"mode": "AUTOMATIC"})) == []
    assert validate("STO-004", LUSTRE, fsx()) == []


@pytest.mark.parametrize("kind", ["SCRATCH_2", "PERSISTENT_1"])
def test_metadata_iops_outside_persistent_2_is_an_error_not_silently_dropped(kind: str) -> None:
    data = blueprint(6000, kind, **({"throughput_mb_s_per_tib": 200} if kind == "PERSISTENT_1" else {}))
    [message] = messages(data, "STO-004")
    assert "only PERSISTENT_2" in message
    assert len(validate("STO-004", LUSTRE, metadata(6000) | {"deploymentType": kind})) == 1


@pytest.mark.parametrize(("iops", "count"), [(6000, 0), (12000, 0), (3000, 1), (24000, 1)])
def test_intelligent_tiering_takes_6000_or_12000(iops: int, count: int) -> None:
    props = metadata(iops, storageType="INTELLIGENT_TIERING")
    assert len(validate("STO-004", LUSTRE, props)) == count


def test_automatic_mode_takes_no_iops() -> None:
    [message] = validate("STO-004", LUSTRE, metadata(6000, mode="AUTOMATIC"))
    assert "AUTOMATIC" in message


def test_unknown_values_are_skipped_at_preview() -> None:
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE
    assert validate("STO-004", LUSTRE, metadata(UNKNOWN_STRING_VALUE)) == []
