"""FSx for Lustre Intelligent-Tiering as a blueprint gives it: elastic storage with no capacity, a throughput
capacity in 4,000 MB/s steps, 6,000 or 12,000 metadata IOPS and an SSD read cache, each limit refused by the STO
rule that owns it; the design validates and passes, its render and cost say what it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.policies.builders import aws, evaluate_data

FIXTURES = Path(__file__).parent / "fixtures" / "catalog2026"
DESIGN = FIXTURES / "aws-fsx-intelligent-tiering.yaml"


def test_the_tiering_design_validates_and_passes(cli: Any) -> None:
    result = cli("check", DESIGN, "-f", "json")
    data = json.loads(result.stdout)
    assert (result.exit_code, data["verdict"]) == (0, "pass")
    assert [f["id"] for f in data["findings"] if f["level"] in ("error", "warning")] == []


def tiering(**lustre: Any) -> dict:
    base: dict[str, Any] = {"mount": "/fsx", "deployment_type": "PERSISTENT_2", "storage_type": "INTELLIGENT_TIERING",
                            "throughput_capacity_mb_s": 8000, "metadata_iops": 12000}
    base.update(lustre)
    return aws(storage={"lustre": {k: v for k, v in base.items() if v is not None}})


def findings(data: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in evaluate_data(data).findings:
        if f.level == "error":
            out.setdefault(f.id, []).append(f"{f.path}: {f.message} → {f.hint}")
    return out


def test_a_valid_tiering_file_system_has_no_storage_finding() -> None:
    assert not {k: v for k, v in findings(tiering()).items() if k.startswith("STO")}


@pytest.mark.parametrize(("change", "rule", "said"), [
    ({"throughput_capacity_mb_s": 5000}, "STO-002",
     "storage.lustre.throughput_capacity_mb_s: throughput capacity 5,000 MB/s is not valid: INTELLIGENT_TIERING "
     "takes 4,000 MB/s or a multiple of it, up to 2,000,000 → use 4,000 or 8,000"),
    ({"throughput_capacity_mb_s": 2_004_000}, "STO-002",
     "storage.lustre.throughput_capacity_mb_s: throughput capacity 2,004,000 MB/s is not valid: INTELLIGENT_TIERING "
     "takes 4,000 MB/s or a multiple of it, up to 2,000,000 → use 2,000,000"),
    ({"throughput_capacity_mb_s": None}, "STO-002",
     "storage.lustre: INTELLIGENT_TIERING storage needs a throughput capacity for the whole file system: "
     "INTELLIGENT_TIERING takes 4,000 MB/s or a multiple of it, up to 2,000,000 → e.g. throughput_capacity_mb_s: 4000"),
    ({"metadata_iops": 7000}, "STO-004",
     "storage.lustre.metadata_iops: FSx metadata IOPS 7,000 is not valid: Intelligent-Tiering takes 6,000 or 12,000 "
     "→ use 6,000 or 12,000"),
    ({"metadata_iops": 24000}, "STO-004",
     "storage.lustre.metadata_iops: FSx metadata IOPS 24,000 is not valid: Intelligent-Tiering takes 6,000 or "
     "12,000 → use 12,000"),
    ({"metadata_iops": None}, "STO-004",
     "storage.lustre.metadata_iops: INTELLIGENT_TIERING storage needs provisioned metadata IOPS: AUTOMATIC mode is "
     "for SSD file systems only → set metadata_iops: 6000 or 12000"),
    ({"capacity_gib": 2400}, "STO-001",
     "storage.lustre.capacity_gib: FSx capacity 2,400 GiB is not accepted: INTELLIGENT_TIERING storage is elastic "
     "(it grows and shrinks with the data), so the file system takes no storage capacity → remove capacity_gib; "
     "size it by throughput_capacity_mb_s"),
    ({"throughput_mb_s_per_tib": 250}, "STO-002",
     "storage.lustre.throughput_mb_s_per_tib: INTELLIGENT_TIERING storage has no size, so no throughput per TiB: "
     "throughput_mb_s_per_tib is not accepted → remove it; set throughput_capacity_mb_s for the whole file system"),
    ({"deployment_type": "SCRATCH_2", "metadata_iops": None}, "STO-002",
     "storage.lustre.storage_type: SCRATCH_2 has no INTELLIGENT_TIERING storage: it is PERSISTENT_2 only → use "
     "deployment_type PERSISTENT_2, or SSD storage"),
    ({"read_cache": {"sizing_mode": "USER_PROVISIONED", "size_gib": 16}}, "STO-002",
     "storage.lustre.read_cache: an SSD read cache of 16 GiB is not valid at 8,000 MB/s: AWS takes 32 to 131,072 GiB "
     "per 4,000 MB/s, here 64 to 262,144 GiB → use a size from 64 to 262,144 GiB"),
    ({"read_cache": {"sizing_mode": "USER_PROVISIONED"}}, "STO-002",
     "storage.lustre.read_cache: a USER_PROVISIONED read cache needs its size → set read_cache.size_gib"),
    ({"read_cache": {"sizing_mode": "NO_CACHE", "size_gib": 64}}, "STO-002",
     "storage.lustre.read_cache: a read cache sized NO_CACHE takes no size (64 GiB given) → remove "
     "read_cache.size_gib, or use sizing_mode USER_PROVISIONED"),
])
def test_tiering_limits_fail_with_the_rule_that_owns_them(change: dict, rule: str, said: str) -> None:
    found = findings(tiering(**change))
    assert found.get(rule) == [said]
    assert not {k for k in found if k.startswith("STO")} - {rule}


def test_ssd_storage_refuses_what_only_tiering_takes() -> None:
    lustre = {"mount": "/fsx", "capacity_gib": 4800, "deployment_type": "PERSISTENT_2", "throughput_mb_s_per_tib": 250,
              "throughput_capacity_mb_s": 4000, "read_cache": {"sizing_mode": "NO_CACHE"}}
    found = findings(aws(storage={"lustre": lustre}))["STO-002"]
    assert [line.split(":")[0] for line in found] == ["storage.lustre.throughput_capacity_mb_s",
                                                       "storage.lustre.read_cache"]


def test_ssd_storage_without_a_capacity_is_invalid_input(cli: Any, tmp_path: Path) -> None:
    data = yaml.safe_load(DESIGN.read_text())
    data["storage"]["lustre"]["storage_type"] = "SSD"
    path = tmp_path / "bp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = cli("check", path)
    assert result.exit_code == 2
    assert f"{path}:" in result.output and "storage.lustre" in result.output
    assert "capacity_gib is required for SSD storage" in result.output


def test_the_checkpoint_window_uses_the_tiering_throughput() -> None:
    """STO-003: 8,000 MB/s is 8 GB/s; a 100B-parameter checkpoint (1,400 GB) takes 175 s."""
    data = tiering()
    data["workload"] = {"model_params_b": 100, "max_checkpoint_s": 120}
    [finding] = [f for f in evaluate_data(data).findings if f.id == "STO-003"]
    assert "takes 175 s at 8.0 GB/s" in finding.message


def test_a_tiering_file_system_is_unpriced_not_free(cli: Any) -> None:
    result = cli("cost", DESIGN, "-f", "json")
    assert result.exit_code == 0
    lines = [line for line in json.loads(result.stdout)["lines"] if "INTELLIGENT_TIERING" in line["item"]]
    assert len(lines) == 1 and lines[0]["priced"] is False


def test_the_stack_resources_name_the_tiering_settings(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert cli("render", DESIGN, "-o", out).exit_code == 0
    fsx = yaml.safe_load((out / "pulumi" / "resources.yaml").read_text())["resources"]["fsx"]
    assert (fsx["storage_capacity_gib"], fsx["throughput_mb_s_per_tib"]) == (None, None)
    assert (fsx["throughput_capacity_mb_s"], fsx["read_cache"], fsx["read_cache_gib"]) == (8000, "USER_PROVISIONED",
                                                                                          4096)
    assert (fsx["metadata_mode"], fsx["metadata_iops"]) == ("USER_PROVISIONED", 6000)
