"""NodeName lines carry the catalog's sockets, cores, threads and memory; memory becomes a consumable only
when every node's memory is known. gres.conf names each vendor's device files."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from clusterforge.core.hostlist import expand
from clusterforge.render import gres_conf
from tests.conftest import EXAMPLES

NO_MEMORY = """\
apiVersion: clusterforge/v1
kind: Catalog
hardware:
  site-gpu:
    kind: server
    description: a GPU server whose memory the site has not recorded
    gpus: {model: H100-SXM5, count: 8, memory_gib: 80}
    nics: {compute: 8, speed_gbps: 400}
    max_power_kw: 10
    psus: {count: 6, required: 4}
    u_height: 8
    weight_kg: 120
    depth_mm: 897
    max_inlet_c: 30
    sources: {gpus: s, nics: s, max_power_kw: s, psus: s, u_height: s, weight_kg: s, depth_mm: s, max_inlet_c: s}
"""


def _conf(out: Path, name: str) -> str:
    return (out / "slurm" / name).read_text()


def test_dgx_h100_node_line(cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("render", EXAMPLES / "onprem-dgx-h100.yaml", "-o", out).exit_code == 0
    conf = _conf(out, "slurm.conf")
    # 2 × 56 cores × 2 threads; 2,048 GiB × 1024 × 0.95 = 1,992,294 MiB
    assert ("NodeName=gpu-[0001-0016] Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=1992294 "
            "Gres=gpu:h100:8") in conf
    assert "SelectTypeParameters=CR_Core_Memory" in conf
    assert "ConstrainRAMSpace=yes" in _conf(out, "cgroup.conf")


def test_unknown_memory_keeps_memory_unconstrained(cli, tmp_path: Path) -> None:
    catalog = tmp_path / "site.yaml"
    catalog.write_text(NO_MEMORY)
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text("apiVersion: clusterforge/v1\nkind: Cluster\nname: x\ntarget: onprem\n"
                         "pools: [{name: gpu, hardware: site-gpu, count: 2, partition: train}]\n"
                         "slurm: {partitions: [{name: train, pools: [gpu], default: true}]}\n")
    out = tmp_path / "out"
    result = cli("render", blueprint, "-o", out, "--catalog", catalog)
    assert result.exit_code == 0, result.output
    conf = _conf(out, "slurm.conf")
    assert "NodeName=gpu-[0001-0002] Gres=gpu:h100:8 State=UNKNOWN" in conf
    assert "SelectTypeParameters=CR_Core\n" in conf
    assert "ConstrainRAMSpace=no" in _conf(out, "cgroup.conf")


# --- gres.conf by GPU vendor ----------------------------------------------------------------------------------

AMD = """\
apiVersion: clusterforge/v1
kind: Cluster
name: amd
target: onprem
pools:
  - {name: gpu, hardware: HARDWARE, count: 4, partition: train}
  - {name: one, hardware: site-mi300x-1, count: 1, partition: train}
fabric: {kind: roce, switch: sn5600}
slurm: {partitions: [{name: train, pools: [gpu, one], default: true}]}
software: {stack: rocm, rocm: 7.2.2, rccl: 2.27.7, amdgpu_driver: 30.30.3}
"""
ONE_AMD_GPU = NO_MEMORY.replace("site-gpu", "site-mi300x-1").replace(
    "{model: H100-SXM5, count: 8, memory_gib: 80}", "{model: MI300X, count: 1, memory_gib: 192, vendor: amd}").replace(
    "{compute: 8, speed_gbps: 400}", "{compute: 1, speed_gbps: 400}")


@pytest.mark.parametrize(("hardware", "gres_type"), [("mi300x-8gpu", "mi300x"), ("mi325x-8gpu", "mi325x"),
                                                     ("mi355x-8gpu", "mi355x")])
def test_amd_gpus_are_render_nodes_with_amd_gpu_env(cli, tmp_path: Path, hardware: str, gres_type: str) -> None:
    catalog = tmp_path / "site.yaml"
    catalog.write_text(ONE_AMD_GPU)
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(AMD.replace("HARDWARE", hardware))
    out = tmp_path / "out"
    result = cli("render", blueprint, "-o", out, "--catalog", catalog)
    assert result.exit_code == 0, result.output
    lines = _conf(out, "gres.conf").splitlines()[1:]
    assert lines == [f"NodeName=gpu-[0001-0004] Name=gpu Type={gres_type} File=/dev/dri/renderD[128-135] "
                     "Flags=amd_gpu_env",
                     "NodeName=one-0001 Name=gpu Type=mi300x File=/dev/dri/renderD128 Flags=amd_gpu_env"]
    assert re.search(rf"^NodeName=gpu-\[0001-0004\] .*Gres=gpu:{gres_type}:8 ", _conf(out, "slurm.conf"), re.M)
    assert len(expand("/dev/dri/renderD[128-135]")) == 8
    group_vars = (out / "inventory/group_vars/all.yml").read_text()
    assert "infiniband_enabled: true" in group_vars  # RoCE needs rdma-core and the verbs providers too


@pytest.mark.parametrize(("vendor", "line"), [
    ("nvidia", "NodeName=gpu-[0001-0016] Name=gpu Type=h100 File=/dev/nvidia[0-7]"),
    (None, "NodeName=gpu-[0001-0016] Name=gpu Type=h100 File=/dev/nvidia[0-7]"),  # no vendor recorded: NVIDIA
    ("amd", "NodeName=gpu-[0001-0016] Name=gpu Type=h100 File=/dev/dri/renderD[128-135] Flags=amd_gpu_env"),
    ("aws", "NodeName=gpu-[0001-0016] Name=gpu Type=h100 File=/dev/neuron[0-7]"),
])
def test_gres_files_follow_the_pools_gpu_vendor(vendor: str | None, line: str) -> None:
    """The plan's PoolNodes.gpu_vendor alone picks the device files (here swapped under the DGX H100 example)."""
    from tests.test_render_conf_values import context

    ctx = context()
    pool = dataclasses.replace(ctx.plan.nodes[0], gpu_vendor=vendor)
    ctx = dataclasses.replace(ctx, plan=dataclasses.replace(ctx.plan, nodes=(pool, *ctx.plan.nodes[1:])))
    assert gres_conf.render(ctx)["slurm/gres.conf"].splitlines()[1] == line


@pytest.mark.parametrize(("count", "vendor", "files"), [
    (8, "nvidia", "/dev/nvidia[0-7]"), (1, "nvidia", "/dev/nvidia0"), (8, "amd", "/dev/dri/renderD[128-135]"),
    (1, "amd", "/dev/dri/renderD128"), (16, "aws", "/dev/neuron[0-15]"), (1, "aws", "/dev/neuron0"),
])
def test_device_files(count: int, vendor: str, files: str) -> None:
    assert gres_conf.device_files(count, vendor) == files
    assert len(expand(files)) == count
