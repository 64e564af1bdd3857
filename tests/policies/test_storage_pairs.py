"""STO-001 on a file system AWS does not offer: a deployment type without the storage type (PERSISTENT_2 and SCRATCH
are SSD only; AWS FSx CreateFileSystem, StorageCapacity and PerUnitStorageThroughput) or an HDD file system without
the tier its sizes follow. No size is valid then, and STO-001 says it cannot judge one instead of making up a rule
(it once read PERSISTENT_2 HDD as "a multiple of 1,800 GiB (HDD at 125 MB/s/TiB)", a tier that does not exist)."""

from __future__ import annotations

import pytest

from clusterforge.targets.aws.crossguard.lustre import capacity_problems
from tests.policies.builders import evaluate_data
from tests.policies.test_storage import fsx


def sto(kind: str, storage: str, tier: int | None, capacity: int = 6000) -> dict[str, list[str]]:
    lustre: dict = {"capacity_gib": capacity, "deployment_type": kind, "storage_type": storage}
    if tier is not None:
        lustre["throughput_mb_s_per_tib"] = tier
    findings = evaluate_data(fsx(**lustre)).findings
    return {rule: [f"{f.message} → {f.hint}" for f in findings if f.id == rule] for rule in ("STO-001", "STO-002")}


@pytest.mark.parametrize(("kind", "storage", "tier", "why", "fix"), [
    ("PERSISTENT_2", "HDD", 125, "PERSISTENT_2 has no HDD storage", "use SSD, or PERSISTENT_1 for HDD"),
    ("PERSISTENT_2", "HDD", None, "PERSISTENT_2 has no HDD storage", "use SSD, or PERSISTENT_1 for HDD"),
    ("SCRATCH_2", "HDD", None, "SCRATCH_2 has no HDD storage", "use SSD, or PERSISTENT_1 for HDD"),
    ("SCRATCH_1", "HDD", None, "SCRATCH_1 has no HDD storage", "use SSD, or PERSISTENT_1 for HDD"),
    ("PERSISTENT_1", "HDD", 50, "PERSISTENT_1 HDD sizes follow the throughput tier (steps of 6,000 GiB at 12, "
     "1,800 GiB at 40) and 50 MB/s/TiB is neither", "set throughput_mb_s_per_tib to 12 or 40"),
    ("PERSISTENT_1", "HDD", None, "PERSISTENT_1 HDD sizes follow the throughput tier (steps of 6,000 GiB at 12, "
     "1,800 GiB at 40) and none is given", "set throughput_mb_s_per_tib to 12 or 40"),
])
def test_sto001_cannot_judge_a_capacity_of_a_file_system_aws_does_not_offer(
        kind: str, storage: str, tier: int | None, why: str, fix: str) -> None:
    said = sto(kind, storage, tier)
    assert said["STO-001"] == [f"FSx capacity 6,000 GiB cannot be judged: {why} → {fix} (STO-002 reports the "
                               "setting)"]
    assert len(said["STO-002"]) == 1  # the rule that names the invalid setting still speaks, at its own line


def test_the_wording_case_says_nothing_false() -> None:
    # PERSISTENT_2 on HDD: nothing about a 1,800 GiB step or a 125 MB/s/TiB HDD tier, neither of which exists
    text = " ".join(m for messages in sto("PERSISTENT_2", "HDD", 125).values() for m in messages)
    assert "1,800" not in text and "multiple" not in text and "HDD at" not in text


@pytest.mark.parametrize(("kind", "storage", "tier", "capacity", "valid"), [
    ("PERSISTENT_1", "HDD", 12, 6000, True),
    ("PERSISTENT_1", "HDD", 40, 1800, True),
    ("PERSISTENT_1", "HDD", 12, 1800, False),
])
def test_sto001_still_judges_the_hdd_tiers_that_exist(kind: str, storage: str, tier: int, capacity: int,
                                                       valid: bool) -> None:
    said = sto(kind, storage, tier, capacity)["STO-001"]
    if valid:
        assert said == []
    else:
        assert said == [f"FSx capacity {capacity:,} GiB is not valid: it must be a multiple of 6,000 GiB (HDD at 12 "
                        "MB/s/TiB) → use 6,000 GiB"]


def test_at_preview_the_same_pair_cannot_be_judged() -> None:
    props = {"deploymentType": "PERSISTENT_2", "storageType": "HDD", "storageCapacity": 6000,
             "perUnitStorageThroughput": 125}
    assert capacity_problems(props) == ["storageCapacity 6,000 GiB cannot be judged: PERSISTENT_2 has no HDD storage "
                                        "(use SSD, or PERSISTENT_1 for HDD)"]
