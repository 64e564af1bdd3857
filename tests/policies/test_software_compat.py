"""SW-001 as the vendors state compatibility (a driver branch per CUDA major, NCCL builds per CUDA major, an EFA
installer minimum per instance type), SW-005 (the driver knows the GPU's architecture), and clusters that run
NVIDIA and AMD pools side by side, each pool checked against its own vendor's pins (or its own override)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.policies.builders import aws, design, evaluate_data, found


def findings(data: dict, rule_ids: tuple[str, ...] = ("SW-001", "SW-002", "SW-004", "SW-005")) -> list[Any]:
    return [f for f in evaluate_data(data).findings if f.id in rule_ids]


# AWS Deep Learning Base OSS AMI of 2026-01-02 for P5en, P6-B200 and P6-B300: EFA installer 1.45.0.
DLAMI_2026_01 = {"nvidia_driver": "580.105.08", "cuda": "13.0", "nccl": "2.28.3", "efa_installer": "1.45.0",
                 "aws_ofi_nccl": "1.17.2"}
# The 2025 defaults: EFA installer 1.41.0, older than P6-B300's minimum
SET_2025 = {"nvidia_driver": "570.133.20", "cuda": "12.8", "nccl": "2.26.2", "efa_installer": "1.41.0",
            "aws_ofi_nccl": "1.14.2"}


def on(instance: str, software: dict) -> dict:
    return aws(pools=[{"name": "gpu", "hardware": instance, "count": 4, "partition": "train"}], software=software)


@pytest.mark.parametrize("instance", ["p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge"])
def test_the_dlami_of_january_2026_passes_on_the_instances_it_ships_for(instance: str) -> None:
    assert [(f.id, f.message) for f in findings(on(instance, DLAMI_2026_01))] == []


def test_an_installer_older_than_the_instance_type_minimum_is_an_error() -> None:
    [finding] = [f for f in findings(on("p6-b300.48xlarge", {**SET_2025, "nvidia_driver": "580.95.05"}))
                 if "EFA installer" in f.message]
    assert finding.id == "SW-001" and finding.level == "error"
    assert "1.41.0" in finding.message and "p6-b300" in finding.message
    assert found(on("p6-b200.48xlarge", SET_2025)) == []  # 1.41.0 is enough for P6-B200


def test_the_defaults_are_a_current_set_every_aws_instance_type_accepts() -> None:
    from clusterforge.target_kernel import blueprint_model

    software = blueprint_model().model_fields["software"].default  # with target aws's EFA pins
    # the x86_64 DLAMI set of 2026-10 (driver, CUDA, EFA installer, plugin) with an NCCL built for CUDA 13
    assert software.pins() == {"nvidia_driver": "595.91.07", "cuda": "13.2", "nccl": "2.30.7",
                                 "efa_installer": "1.50.0", "aws_ofi_nccl": "1.21.1", "slurm": "24.11"}
    for instance in ("p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge"):
        assert [(f.id, f.message) for f in findings(on(instance, {}))] == [], instance


@pytest.mark.parametrize(("software", "level", "text"), [
    # CUDA 13.4 is newer than the tables; the driver meets the R580 minimum of CUDA 13.x
    ({"nvidia_driver": "600.20.01", "cuda": "13.4", "nccl": "2.30.7"}, "warning", "newer than the tables know"),
    # NCCL 2.33.1 is newer than the tables; CUDA and the driver are known
    ({"nvidia_driver": "595.91.07", "cuda": "13.2", "nccl": "2.33.1"}, "warning", "newer than the tables know"),
    # a driver older than CUDA 13.x's branch minimum stays an error, known minor or not
    ({"nvidia_driver": "575.57.08", "cuda": "13.4", "nccl": "2.30.7"}, "error", "older than"),
    # NCCL with no build for the CUDA major stays an error
    ({"nvidia_driver": "595.91.07", "cuda": "13.2", "nccl": "2.26.2"}, "error", "has no build for CUDA 13.2"),
    # a release inside the known range that the tables lack is not "newer": CUDA 12.7 was never released
    ({"nvidia_driver": "595.91.07", "cuda": "12.7", "nccl": "2.26.2"}, "error", "not in the software tables"),
])
def test_a_release_newer_than_the_tables_is_a_warning_an_incompatible_set_an_error(
        software: dict, level: str, text: str) -> None:
    sw = [f for f in findings(design(software=software)) if f.id == "SW-001"]
    assert any(f.level == level and text in f.message for f in sw), [(f.level, f.message) for f in sw]
    if level == "warning":
        assert all(f.level == "warning" for f in sw)


B200 = [{"name": "gpu", "hardware": "dgx-b200", "count": 128, "partition": "train"}]


def test_blackwell_on_a_driver_older_than_r570_fails_with_the_architecture_minimum() -> None:
    sw = findings(design(B200, software={"nvidia_driver": "550.54.14", "cuda": "12.4", "nccl": "2.21.5"}))
    assert [f.id for f in sw if f.level == "error"] == ["SW-005"], [(f.id, f.message) for f in sw]
    [finding] = sw
    assert "Blackwell" in finding.message and "570.133.20" in finding.message and "B200" in finding.message
    assert finding.path == "software.nvidia_driver"
    ok = findings(design(B200, software={"nvidia_driver": "570.133.20", "cuda": "12.8", "nccl": "2.26.2"}))
    assert ok == []


def test_an_amd_pool_needs_a_rocm_release_that_knows_its_architecture() -> None:
    mi355 = [{"name": "gpu", "hardware": "mi355x-8gpu", "count": 4, "partition": "train"}]
    old = {"stack": "rocm", "rocm": "6.4.0", "rccl": "2.22.3", "amdgpu_driver": "30.30.3"}
    sw = findings(design(mi355, software=old))
    assert [f.id for f in sw] == ["SW-005"] and "CDNA4" in sw[0].message and "7.0.0" in sw[0].message
    assert findings(design(mi355, software={**old, "rocm": "7.2.2", "rccl": "2.27.7"})) == []


ROCM = {"rocm": "7.2.2", "rccl": "2.27.7", "amdgpu_driver": "30.30.3"}
MIXED = [{"name": "h100", "hardware": "dgx-h100", "count": 16, "partition": "train"},
         {"name": "mi", "hardware": "mi300x-8gpu", "count": 16, "partition": "train"}]


def test_a_mixed_nvidia_and_amd_cluster_with_both_vendors_pins_passes() -> None:
    assert [(f.id, f.message) for f in findings(design(MIXED, software=ROCM))] == []


def test_each_pool_is_checked_against_its_own_vendors_pins() -> None:
    [amd] = findings(design(MIXED, software={**ROCM, "rccl": "2.26.6"}))
    assert amd.id == "SW-001" and amd.path == "software.rccl"
    assert "pool mi" in amd.message and "h100" not in amd.message
    [nvidia] = findings(design(MIXED, software={**ROCM, "nvidia_driver": "560.28.03"}))
    assert nvidia.id == "SW-001" and nvidia.path == "software.nvidia_driver"
    assert "pool h100" in nvidia.message and "pool mi" not in nvidia.message


def test_a_pool_whose_vendor_has_no_pins_still_fails_sw004() -> None:
    [finding] = findings(design(MIXED))
    assert finding.id == "SW-004" and finding.path == "pools[1].hardware"
    assert "no ROCm/RCCL pins" in finding.message and "rocm: ..., rccl: ..." in finding.hint


def test_a_declared_stack_still_means_one_vendor() -> None:
    assert [f.id for f in findings(design(MIXED, software={"stack": "rocm", **ROCM}))] == ["SW-004"]


def test_a_pool_override_is_honored() -> None:
    pools = [MIXED[0], {**MIXED[1], "software": {"rocm": "7.1.1", "rccl": "2.27.7"}}]
    assert findings(design(pools, software=ROCM)) == []
    pools[1]["software"] = {"rocm": "7.2.2", "rccl": "2.26.6"}
    [finding] = findings(design(pools, software=ROCM))
    assert finding.id == "SW-001" and finding.path == "pools[1].software.rccl" and "pool mi" in finding.message
    # an override alone gives an AMD pool its pins
    pools[1]["software"] = ROCM
    assert findings(design(pools)) == []


def test_a_pool_override_takes_only_version_pins() -> None:
    from clusterforge.core.errors import ClusterforgeError

    pools = [{**MIXED[1], "software": {"stack": "rocm", **ROCM}}]
    with pytest.raises(ClusterforgeError, match=r"pools\[0\]\.software\.stack"):
        evaluate_data(design(pools))


def test_the_plugin_row_says_what_it_needs_of_the_stack_in_its_own_keys() -> None:
    """aws-ofi-nccl's rows name the stack pins they need (`min_nccl`, `cuda_majors`); the check reads the keys, so the
    messages name the pin and the hint the oldest plugin that supports the pinned major."""
    old_collectives = {**DLAMI_2026_01, "aws_ofi_nccl": "1.16.0", "efa_installer": "1.42.0", "nccl": "2.21.5",
                       "cuda": "12.4", "nvidia_driver": "550.54.14"}
    assert ("aws-ofi-nccl 1.16.0 needs nccl ≥ 2.23.4, not 2.21.5" in
            [f.message for f in findings(on("p5.48xlarge", old_collectives))])
    [major] = [f for f in findings(on("p5en.48xlarge", {**DLAMI_2026_01, "aws_ofi_nccl": "1.16.3",
                                                         "efa_installer": "1.43.3"})) if "supports" in f.message]
    assert major.message == "aws-ofi-nccl 1.16.3 supports cuda 12.x, not 13.0"
    assert major.hint == "pin aws-ofi-nccl ≥ 1.17.0, the oldest that supports cuda 13"


@pytest.mark.parametrize(("row", "error"), [
    ({"min_nccl": "2.x"}, "min_nccl"),                # a requirement is a release
    ({"cuda_majors": []}, "cuda_majors"),             # at least one major
    ({"needs_nccl": "2.23.4"}, "unknown key 'needs_nccl'"),
])
def test_a_requirement_row_rejects_what_is_not_a_release_or_a_major(row: dict, error: str) -> None:
    from pydantic import ValidationError

    from clusterforge.targets.aws.software import AwsOfiNcclRow

    with pytest.raises(ValidationError, match=error):
        AwsOfiNcclRow(aws_ofi_nccl="1.21.1", source="a test row", **row)
    assert AwsOfiNcclRow(aws_ofi_nccl="1.21.1", source="a test row", min_nccl="2.17.1").requires() == {
        "nccl": "2.17.1"}


def test_a_site_row_that_names_no_pin_is_an_error_not_a_pass(tmp_path) -> None:
    """A typo in a site row's requirement (`min_ncl`) would otherwise make the plugin serve no stack and skip its
    checks: it is an error naming the pin it meant."""
    import yaml

    from clusterforge.target_kernel import load_catalog
    from tests.policies.builders import evaluate_data

    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({"software": {"aws_ofi_nccl": [
        {"aws_ofi_nccl": "1.99.0", "min_ncl": "2.17.1", "source": "a site's own qualification run"}]}}))
    data = on("p5en.48xlarge", {**DLAMI_2026_01, "aws_ofi_nccl": "1.99.0"})
    said = [f for f in evaluate_data(data, catalog=load_catalog([site])).findings if f.id == "SW-001"]
    assert any("names a pin `software:` does not have: ncl" in f.message and "did you mean nccl?" in f.hint
               for f in said), [f.message for f in said]
