"""SW-001 over the software tables as catalog data: the 2026 sets, ROCm and Neuron stacks, and a site's own
qualified set added with --catalog; SW-004, the stack the accelerators run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clusterforge.accelerators.nvidia.software import CudaRow
from clusterforge.target_kernel import load_catalog
from tests.policies.builders import aws, design, found

# AWS Deep Learning Base OSS AMI (Ubuntu 24.04) major packages; NCCL is the framework's (not in the AMI notes).
DLAMI_2025_12 = {"nvidia_driver": "580.105.08", "cuda": "13.0", "efa_installer": "1.45.1", "aws_ofi_nccl": "1.17.2",
                 "nccl": "2.28.3"}
DLAMI_2026_10 = {"nvidia_driver": "595.91.07", "cuda": "13.2", "efa_installer": "1.50.0", "aws_ofi_nccl": "1.21.1",
                 "nccl": "2.30.7"}


@pytest.mark.parametrize(("software", "expect"), [
    (DLAMI_2025_12, []),  # used to be two SW-001 errors: the tables stopped at EFA 1.42 and aws-ofi-nccl 1.16
    (DLAMI_2026_10, []),
    ({**DLAMI_2025_12, "aws_ofi_nccl": "1.16.3", "efa_installer": "1.43.3"}, ["SW-001"]),  # no CUDA 13 support
    ({**DLAMI_2025_12, "efa_installer": "1.50.0"}, ["SW-001"]),  # 1.50 bundles aws-ofi-nccl 1.21, not 1.17
    ({**DLAMI_2026_10, "nvidia_driver": "580.105.08"}, ["SW-001"]),  # CUDA 13.2 on an R580 driver
])
def test_dlami_sets_on_aws(software: dict, expect: list[str]) -> None:
    assert found(aws(software=software)) == expect


ROCM = {"stack": "rocm", "rocm": "7.2.2", "rccl": "2.27.7", "amdgpu_driver": "30.30.3"}
NEURON = {"stack": "neuron", "neuron_sdk": "2.32.0", "neuron_driver": "2.30.2.0", "efa_installer": "1.47.0"}
MI300X = [{"name": "gpu", "hardware": "mi300x-8gpu", "count": 16, "partition": "train"}]
# A Trainium instance type whose accelerators the catalog marks vendor aws (a site file: the stack SW-004 expects
# from the catalog's vendor, whatever the built-in Trainium rows say).
TRAINIUM = {"apiVersion": "clusterforge/v1", "kind": "Catalog", "hardware": {"site-trn": {
    "kind": "instance", "description": "a Trainium instance type",
    "accelerators": {"model": "Trainium2", "count": 16, "memory_gib": 96, "vendor": "aws"},
    "efa_max_interfaces": 16, "network_cards": 16, "efa_bandwidth_gbps": 3200,
    "sources": {"accelerators": "s", "efa_max_interfaces": "s", "network_cards": "s", "efa_bandwidth_gbps": "s"}}}}
TRN_POOLS = [{"name": "gpu", "hardware": "site-trn", "count": 4, "partition": "train"}]


@pytest.mark.parametrize(("software", "expect"), [
    (ROCM, []),
    ({**ROCM, "rccl": "2.26.6"}, ["SW-001"]),          # ROCm 7.2.2 ships RCCL 2.27.7
    ({**ROCM, "amdgpu_driver": "30.40.1"}, ["SW-001"]),  # not a series AMD lists for 7.2.2
    ({**ROCM, "rocm": "6.9.0"}, ["SW-001"]),           # not a ROCm release
    ({"stack": "rocm", "rocm": "7.2.2"}, ["SW-002"]),  # the stack's RCCL is not pinned
    ({**ROCM, "cuda": "12.7"}, []),                    # the CUDA fields are not this stack's
])
def test_rocm_stack(software: dict, expect: list[str]) -> None:
    assert found(design(MI300X, software=software)) == expect


@pytest.mark.parametrize(("software", "expect"), [
    (NEURON, []),
    ({**NEURON, "neuron_driver": "2.29.0.0"}, ["SW-001"]),  # older than 2.32.0's aws-neuronx-dkms
    ({**NEURON, "efa_installer": "1.50.0"}, ["SW-001"]),    # Neuron 2.28 to 2.32 pin EFA installer 1.47
    ({"stack": "neuron", "neuron_sdk": "2.32.0"}, ["SW-002"]),
])
def test_neuron_stack_on_aws(software: dict, expect: list[str], tmp_path: Path) -> None:
    site = tmp_path / "trn.yaml"
    site.write_text(yaml.safe_dump(TRAINIUM))
    assert found(aws(pools=TRN_POOLS, software=software), catalog=load_catalog([site])) == expect


@pytest.mark.parametrize(("pools", "software", "expect"), [
    (MI300X, {}, ["SW-004"]),                           # AMD GPUs on the default CUDA stack
    (MI300X, ROCM, []),
    ([{**MI300X[0], "hardware": "mi355x-8gpu"}], {"stack": "cuda"}, ["SW-004"]),
    (None, ROCM, ["SW-004"]),                           # DGX H100 (NVIDIA) with a ROCm stack
    (None, {}, []),
    (None, {"stack": "neuron", "neuron_sdk": "2.32.0", "neuron_driver": "2.30.2.0"}, ["SW-004"]),
    ([*MI300X, {"name": "ctl", "hardware": "cpu-1u", "count": 1, "role": "controller"}], ROCM, []),  # no GPUs
    ([*MI300X, {"name": "h100", "hardware": "dgx-h100", "count": 2, "partition": "train"}], ROCM, ["SW-004"]),
])
def test_the_stack_is_the_one_the_accelerators_run(pools: list[dict] | None, software: dict,
                                                   expect: list[str]) -> None:
    assert [i for i in found(design(pools, software=software)) if i.startswith("SW-")] == expect


def test_a_mismatched_stack_names_the_pool_vendor_and_the_fix() -> None:
    from tests.policies.builders import evaluate_data

    pools = [{"name": "h100", "hardware": "dgx-h100", "count": 2, "partition": "train"}, *MI300X]
    [finding] = [f for f in evaluate_data(design(pools, software={"stack": "cuda"})).findings if f.id == "SW-004"]
    assert finding.path == "pools[1].hardware"
    assert finding.message == ("pool gpu has AMD MI300X (mi300x-8gpu) but software.stack is cuda: CUDA/NCCL pins "
                               "would be checked and installed, not ROCm/RCCL")
    assert "remove software.stack and pin both vendors' versions side by side (rocm: ..., rccl: ...)" in finding.hint


def test_trainium_on_a_neuron_stack_passes_and_on_cuda_does_not(tmp_path: Path) -> None:
    site = tmp_path / "trn.yaml"
    site.write_text(yaml.safe_dump(TRAINIUM))
    catalog = load_catalog([site])
    assert "SW-004" not in found(aws(pools=TRN_POOLS, software=NEURON), catalog=catalog)
    assert "SW-004" in found(aws(pools=TRN_POOLS), catalog=catalog)


def test_instance_accelerators_without_a_vendor_are_aws_chips(tmp_path: Path) -> None:
    """An instance type listing `accelerators` without a vendor (Gpus.vendor defaults to nvidia): AWS's own chips,
    so Neuron."""
    entry = TRAINIUM["hardware"]["site-trn"]
    chips = {k: v for k, v in entry["accelerators"].items() if k != "vendor"}
    site = tmp_path / "trn.yaml"
    site.write_text(yaml.safe_dump({**TRAINIUM, "hardware": {"site-trn": {**entry, "accelerators": chips}}}))
    catalog = load_catalog([site])
    assert "SW-004" not in found(aws(pools=TRN_POOLS, software=NEURON), catalog=catalog)
    assert "SW-004" in found(aws(pools=TRN_POOLS), catalog=catalog)


def test_every_builtin_row_has_a_source_and_the_tables_cover_late_2026() -> None:
    tables = load_catalog().software
    assert all(len(row.source) > 10 for _, row in tables.rows())
    assert {"13.0", "13.1", "13.2"} <= set(tables.versions("cuda"))
    assert {"1.17.0", "1.21.1"} <= set(tables.versions("aws_ofi_nccl"))
    assert {"1.45.1", "1.50.0"} <= set(tables.versions("efa_installer"))
    assert "7.14.0" in tables.versions("rocm") and "2.32.0" in tables.versions("neuron_sdk")


SITE = {"apiVersion": "clusterforge/v1", "kind": "Catalog", "software": {
    "cuda": [{"cuda": "13.4", "min_driver": "600.20.01", "source": "qualified 2026-11-02, burn-in OPS-4471"}],
    "nccl": [{"nccl": "2.31.2", "cuda": ["13.0", "13.4"], "source": "libnccl2 2.31.2-1+cuda13.4; OPS-4471"}]}}


def _blueprint(write, software: dict) -> Path:
    return write(yaml.safe_dump(design(software=software)))


def test_a_site_adds_a_qualified_set_with_catalog(cli, write) -> None:
    blueprint = _blueprint(write, {"nvidia_driver": "600.20.01", "cuda": "13.4", "nccl": "2.31.2"})
    without = json.loads(cli("check", blueprint, "-f", "json").stdout)
    newer = [f for f in without["findings"] if f["id"] == "SW-001"]
    assert [f["level"] for f in newer] == ["warning", "warning"]  # newer than the tables: not an error
    assert all("newer than the tables know" in f["message"] for f in newer)
    assert "a site that has qualified it adds a row with --catalog" in newer[0]["hint"]
    site = write(yaml.safe_dump(SITE), "site-software.yaml")
    result = cli("check", blueprint, "--catalog", site, "-f", "json")
    assert result.exit_code == 0, result.output
    assert not [f for f in json.loads(result.stdout)["findings"] if f["id"] == "SW-001"]
    listed = cli("catalog", "software", "--catalog", site, "--table", "cuda", "-f", "json")
    rows = {row["cuda"]: row["origin"] for row in json.loads(listed.stdout)}
    assert rows["13.4"] == str(site) and rows["12.8"] == "built-in (software.yaml)"
    for command in (("plan", blueprint), ("render", blueprint, "-o", write("", "x") .parent / "out")):
        assert cli(*command, "--catalog", site).exit_code == 0, command


def test_a_site_row_cannot_redefine_a_builtin_release(cli, write) -> None:
    site = write(yaml.safe_dump({"software": {"cuda": [{"cuda": "12.8", "min_driver": "500.1",
                                                        "source": "an older driver we like"}]}}), "site.yaml")
    result = cli("check", _blueprint(write, {}), "--catalog", site)
    assert result.exit_code == 2
    assert f"{site}:3: software.cuda[0]: cuda '12.8' is already defined (built-in (software.yaml))" in result.stderr
    assert load_catalog().software.row(CudaRow, "12.8").min_driver == "570.26"  # type: ignore[union-attr]


def test_a_site_row_is_checked_like_a_blueprint(cli, write) -> None:
    site = write("software:\n  cuda:\n    - {cuda: latest, min_driver: '1', source: x}\n", "site.yaml")
    result = cli("check", _blueprint(write, {}), "--catalog", site)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{site}:3: software.cuda[0].cuda" in result.stderr
    assert f"{site}:3: software.cuda[0].source" in result.stderr


def test_the_docs_examples_are_a_catalog_and_a_blueprint_the_rules_accept() -> None:
    """docs/policies.md's "Adding a qualified software set" shows two files: a site's qualified set, which loads as
    a catalog whose rows SW-001 then reads, and a cluster of two vendors, whose pools each pass their own vendor's
    software rules."""
    from clusterforge.policies.reference_software import MIXED_VENDORS, SITE_SET

    qualified = load_catalog([SITE_SET]).software.row(CudaRow, "13.4")
    assert qualified is not None and qualified.min_driver == "600.20.01"
    example = yaml.safe_load(MIXED_VENDORS.read_text())
    pools = [{**pool, "partition": "train"} for pool in example["pools"]]  # the builder's one partition
    verdict = found(design(pools, software=example["software"]), level=None)
    assert [i for i in verdict if i.startswith("SW-")] == []
    wrong = {**pools[1], "software": {"rocm": "7.2.2", "rccl": "2.26.6"}}  # not the RCCL ROCm 7.2.2 ships
    assert "SW-001" in found(design([pools[0], wrong], software=example["software"]))
