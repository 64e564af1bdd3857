"""An Intelligent-Tiering FSx for Lustre file system through the stack under Pulumi's mocks: what AWS would be
asked for, and that SSD file systems get none of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.aws.conftest import Run, build_blueprint, build_example

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog2026"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
Stack = Callable[..., Run]


def test_an_intelligent_tiering_file_system_gets_throughput_cache_and_iops_and_no_size(stack: Stack) -> None:
    fsx = stack(build_blueprint(FIXTURES / "aws-fsx-intelligent-tiering.yaml")).recorder.one(FSX).inputs
    assert (fsx["deploymentType"], fsx["storageType"]) == ("PERSISTENT_2", "INTELLIGENT_TIERING")
    assert fsx["throughputCapacity"] == 8000
    assert fsx["dataReadCacheConfiguration"] == {"sizingMode": "USER_PROVISIONED", "size": 4096}
    assert fsx["metadataConfiguration"] == {"mode": "USER_PROVISIONED", "iops": 6000}
    for key in ("storageCapacity", "perUnitStorageThroughput"):  # elastic storage: no size, no tier per TiB
        assert key not in fsx


def test_an_ssd_file_system_gets_no_tiering_arguments(stack: Stack) -> None:
    fsx = stack(build_example("aws-p5")).recorder.one(FSX).inputs
    assert (fsx["storageType"], fsx["storageCapacity"], fsx["perUnitStorageThroughput"]) == ("SSD", 50400, 250)
    for key in ("throughputCapacity", "dataReadCacheConfiguration"):
        assert key not in fsx
