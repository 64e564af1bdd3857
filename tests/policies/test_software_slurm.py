"""Software and SLURM rules."""

from __future__ import annotations

import pytest

from tests.policies.builders import aws, design, found


@pytest.mark.parametrize(("software", "expect"), [
    ({}, []),                                                            # the shipped defaults
    ({"nvidia_driver": "560.35.03", "cuda": "12.8", "nccl": "2.26.2"}, ["SW-001"]),  # 12.8 needs ≥ 570.26
    ({"nvidia_driver": "570.26", "cuda": "12.8", "nccl": "2.26.2"}, []),
    ({"cuda": "12.4", "nvidia_driver": "550.54.14", "nccl": "2.21.5"}, []),
    ({"cuda": "13.0", "nvidia_driver": "580.65.06", "nccl": "2.26.2"}, ["SW-001"]),  # no CUDA 13 build
    ({"cuda": "12.7", "nccl": "2.26.2"}, ["SW-001"]),                    # not a CUDA release
    ({"nvidia_driver": "latest"}, ["SW-002"]),
    ({"nccl": "2.26.*"}, ["SW-002"]),
])
def test_sw_onprem(software: dict, expect: list[str]) -> None:
    assert found(design(software=software)) == expect


@pytest.mark.parametrize(("software", "expect"), [
    ({}, []),
    ({"aws_ofi_nccl": "1.16.0", "efa_installer": "1.42.0", "nccl": "2.21.5", "cuda": "12.4",
      "nvidia_driver": "550.54.14"}, ["SW-001"]),  # the 1.16 plugin needs NCCL ≥ 2.23.4
    ({"efa_installer": "1.38.0"}, ["SW-001"]),    # bundles aws-ofi-nccl 1.13, not the pinned 1.14.2
    ({"efa_installer": "1.39.1"}, ["SW-001"]),    # inside the known range, not a release the tables list
])
def test_sw_efa_stack(software: dict, expect: list[str]) -> None:
    assert found(aws(software=software)) == expect


def test_an_installer_newer_than_the_tables_is_a_warning() -> None:
    """9.9.9 was an error while the tables were a closed list; now it says the tables are behind."""
    assert found(aws(software={"efa_installer": "9.9.9"})) == []
    assert found(aws(software={"efa_installer": "9.9.9"}), level="warning") == ["SW-001"]


def test_slm001_compute_pool_without_partition() -> None:
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 4}]
    assert found(design(pools, slurm={})) == ["SLM-001"]


@pytest.mark.parametrize("defaults", [[True, True], [False, False]])
def test_slm001_exactly_one_default(defaults: list[bool]) -> None:
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 4}, {"name": "dev", "hardware": "dgx-h100", "count": 1}]
    slurm = {"partitions": [{"name": "train", "pools": ["gpu"], "default": defaults[0]},
                            {"name": "debug", "pools": ["dev"], "default": defaults[1]}]}
    assert found(design(pools, slurm=slurm)) == ["SLM-001"]


@pytest.mark.parametrize(("gres", "fails"), [("gpu:h100:8", False), ("gpu:8", False), ("gpu:4", True),
                                             ("gpu:a100:8", True), ("gpu:h100:16", True)])
def test_slm002_gres(gres: str, fails: bool) -> None:
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 4, "partition": "train", "gres": gres}]
    assert found(design(pools)) == (["SLM-002"] if fails else [])
