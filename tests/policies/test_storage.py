"""Storage rules. FSx TiB = GiB / 1024; write GB/s = TiB × MB/s/TiB / 1000; a checkpoint is params × 14 B."""

from __future__ import annotations

import pytest

from tests.policies.builders import aws, design, found


def fsx(**lustre: object) -> dict:
    return aws(storage={"lustre": {"mount": "/fsx", **lustre}})


@pytest.mark.parametrize(("capacity", "kind", "storage", "tier", "fails"), [
    (1200, "PERSISTENT_2", "SSD", 250, False),
    (2400, "PERSISTENT_2", "SSD", 250, False),
    (50400, "PERSISTENT_2", "SSD", 250, False),   # 21 × 2,400
    (3600, "PERSISTENT_2", "SSD", 250, True),
    (3600, "SCRATCH_1", "SSD", None, False),
    (4800, "SCRATCH_1", "SSD", None, True),
    (6000, "PERSISTENT_1", "HDD", 12, False),
    (1800, "PERSISTENT_1", "HDD", 12, True),
    (1800, "PERSISTENT_1", "HDD", 40, False),
])
def test_sto001_capacity(capacity: int, kind: str, storage: str, tier: int | None, fails: bool) -> None:
    lustre = {"capacity_gib": capacity, "deployment_type": kind, "storage_type": storage}
    if tier is not None:
        lustre["throughput_mb_s_per_tib"] = tier
    assert found(fsx(**lustre)) == (["STO-001"] if fails else [])


@pytest.mark.parametrize(("kind", "storage", "tier", "expected"), [
    ("PERSISTENT_2", "SSD", 1000, []),
    ("PERSISTENT_2", "SSD", 300, ["STO-002"]),
    ("PERSISTENT_2", "SSD", None, ["STO-002"]),
    ("PERSISTENT_1", "SSD", 200, []),
    ("PERSISTENT_1", "SSD", 250, ["STO-002"]),
    ("SCRATCH_2", "SSD", None, []),
    ("SCRATCH_2", "SSD", 250, ["STO-002"]),
    # no PERSISTENT_2 HDD exists, so no capacity of it is valid either: STO-001 says it cannot judge one
    ("PERSISTENT_2", "HDD", 12, ["STO-001", "STO-002"]),
])
def test_sto002_throughput(kind: str, storage: str, tier: int | None, expected: list[str]) -> None:
    lustre: dict = {"capacity_gib": 2400 if storage == "SSD" else 6000, "deployment_type": kind,
                    "storage_type": storage}
    if tier is not None:
        lustre["throughput_mb_s_per_tib"] = tier
    assert found(fsx(**lustre)) == expected


@pytest.mark.parametrize(("window", "warns"), [(80, False), (79, True)])
def test_sto003_checkpoint_window(window: float, warns: bool) -> None:
    # 70e9 × 14 B = 980 GB; 50,400 GiB = 49.22 TiB × 250 = 12.30 GB/s → 79.7 s
    data = fsx(capacity_gib=50400, deployment_type="PERSISTENT_2", throughput_mb_s_per_tib=250)
    data["workload"] = {"model_params_b": 70, "max_checkpoint_s": window}
    assert found(data, level="warning") == (["STO-003"] if warns else [])


def test_sto003_small_file_system_for_the_model() -> None:
    # 4,800 GiB = 4.69 TiB × 250 = 1.17 GB/s → 836 s
    data = aws(workload={"model_params_b": 70})
    assert found(data, level="warning") == ["STO-003"]


def test_sto003_onprem_uses_the_stated_bandwidth() -> None:
    # 405e9 × 14 = 5,670 GB at 40 GB/s = 142 s > 120
    data = design(storage={"lustre": {"mount": "/lustre", "write_gb_s": 40}}, workload={"model_params_b": 405})
    assert found(data, level="warning") == ["STO-003"]
