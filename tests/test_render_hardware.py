"""NodeName lines carry the catalog's sockets, cores, threads and memory; memory becomes a consumable only
when every node's memory is known."""

from __future__ import annotations

from pathlib import Path

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
