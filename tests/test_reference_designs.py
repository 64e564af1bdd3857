"""Published reference designs turned into blueprints and run through the CLI as a reviewer would, against
verdicts worked out by hand from the published figures.

The six ways a wrong design used to be merged each have their own test next to the rule: PWR-001 under a skipped
or waived PWR-002 (tests/policies/test_power.py, test_independence.py), liquid heat in an air rack
(test_cooling.py), commands that disagreed (tests/test_one_verdict.py), `plan` on a design it cannot build
(tests/test_plan_cli.py), NET-006 on an explicit opt-out (test_network.py) and the 2026 software sets
(tests/policies/test_software_sets.py). The designs here tie those to the sources.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clusterforge.render.yamlout import load as load_rendered
from tests.policies.builders import aws, design, feed, onprem, rack

# NVIDIA DGX SuperPOD reference architecture (H100 RA; the B200 RA keeps the same scalable unit): 32 DGX per SU,
# eight 400G compute NICs each, QM9700 (64 ports) at 1:1. SU -> (leaf, spine, core).
SUPERPOD = {2: (16, 8, 0), 4: (32, 16, 0), 8: (64, 32, 0), 16: (128, 128, 64), 64: (512, 512, 256)}


def _check(cli, path: Path) -> tuple[int, dict[str, list[str]]]:
    result = cli("check", path, "-f", "json")
    data = json.loads(result.stdout)
    by_level: dict[str, list[str]] = {"error": [], "warning": []}
    for finding in data["findings"]:
        # design-only blueprints note the facility rules they could not run (info); COST-003 names the servers no
        # price covers (these designs price none: tests/test_cost_unpriced.py), not the physics these tests judge
        if finding["level"] != "info" and finding["id"] != "COST-003":
            by_level[finding["level"]].append(finding["id"])
    return result.exit_code, {level: sorted(ids) for level, ids in by_level.items()}


@pytest.mark.parametrize("system", ["dgx-h100", "dgx-b200"])
@pytest.mark.parametrize("units", sorted(SUPERPOD))
def test_superpod_fabric_tables(cli, write, system: str, units: int) -> None:
    pools = [{"name": "gpu", "hardware": system, "count": 32 * units, "partition": "train"}]
    path = write(yaml.safe_dump(design(pools, fabric={"kind": "infiniband", "switch": "qm9700",
                                                      "rail_optimized": True})))
    result = cli("plan", path, "-f", "json")
    assert result.exit_code == 0, result.output
    fabric = json.loads(result.stdout)["fabric"]
    assert (fabric["leaves"], fabric["spines"], fabric["cores"]) == SUPERPOD[units]
    assert fabric["tiers"] == (3 if units >= 16 else 2)  # 16 SU = 4,096 endpoints > 2,048 two-tier capacity
    assert _check(cli, path) == (0, {"error": [], "warning": []})


def su_racks(feeds_per_side: int) -> list[dict]:
    """One H100 SU: 32 DGX H100 in 8 racks of 4 (NVIDIA's 40.8 kW/rack reference density), rear doors of 50 kW."""
    return [rack(f"r{i:02}", count=4, feeds=[feed(f"r{i:02}-{side.lower()}{n}", side)
                                             for side in "AB" for n in range(feeds_per_side)])
            for i in range(1, 9)]


def test_superpod_su_in_racks_of_four(cli, write) -> None:
    """Two 415 V 3φ 60 A feeds a side give 2 × 34.5 = 69.0 kW, so either side carries 40.8 kW (PWR-002) and each
    feed carries 10.2 kW (PWR-001); each 50 kW rear door takes 40.8 kW, 81.6 %, past the 80 % warning (CLG-001
    warns on all 8). DGX H100 keeps 3 of its 4+2 PSUs on a feed loss: PWR-003 warns. Verdict: PASS."""
    path = write(yaml.safe_dump(onprem(su_racks(2), row={"cooling": {"crah_kw": [200, 200, 200]}})))
    assert _check(cli, path) == (0, {"error": [], "warning": ["CLG-001"] * 8 + ["PWR-003"]})


def test_superpod_su_on_one_feed_a_side_fails_every_rack(cli, write) -> None:
    """One feed a side: 34.5 kW usable < 40.8 kW, so each of the 8 racks fails PWR-002; with both feeds up each
    carries 20.4 kW, within its rating, so PWR-001 is quiet. Verdict: FAIL."""
    path = write(yaml.safe_dump(onprem(su_racks(1), row={"cooling": {"crah_kw": [200, 200, 200]}})))
    assert _check(cli, path) == (1, {"error": ["PWR-002"] * 8, "warning": ["CLG-001"] * 8 + ["PWR-003"]})


def test_four_dgx_h100_on_208v_60a_fail_pwr001_whatever_is_done_with_pwr002(cli, write) -> None:
    """40.8 kW on two 208 V 3φ 60 A feeds (17.3 kW usable each, 34.6 kW together): the breakers trip with both
    feeds up (PWR-001), and either side alone is short too (PWR-002). Skipping PWR-002 must not pass it."""
    data = onprem([rack(count=4, feeds=[feed("a", "A", 208, 60), feed("b", "B", 208, 60)])])
    path = write(yaml.safe_dump(data))
    assert _check(cli, path)[1]["error"] == ["PWR-001", "PWR-002"]
    skipped = cli("check", path, "--skip", "PWR-002", "-f", "json")
    assert skipped.exit_code == 1
    assert [f["id"] for f in json.loads(skipped.stdout)["findings"] if f["level"] == "error"] == ["PWR-001"]


def test_gb200_nvl72_scalable_unit(cli, write) -> None:
    """The GB200 SuperPOD SU: 8 NVL72 racks, 576 GPUs. Each rack draws 132 kW (8 power shelves), 85 % of it to the
    liquid loop (112.2 kW) and 19.8 kW to air; 415 V 3φ 250 A feeds give 143.8 kW a side, 91.8 % used after a feed
    loss, past PWR-002's 90 % warning. Row: 898 kW of liquid heat on four 300 kW CDUs (N+1: 900 kW), 158 kW of air
    on three 100 kW CRAHs (N+1: 200 kW). The 48 PSUs split 24/24 and 24 × 5.5 kW carry 132 kW: no PWR-003.
    Verdict: PASS; 576 GPUs in the plan, as 144 SLURM nodes (18 trays of 4 GPUs a rack)."""
    racks = [rack(f"g{i}", count=1, u_height=48, max_weight_kg=2000, footprint_m2=1.2,
                  feeds=[feed(f"g{i}-a", "A", 415, 250), feed(f"g{i}-b", "B", 415, 250)],
                  cooling={"kind": "liquid", "liquid_kw": 120, "air_kw": 25}) for i in range(1, 9)]
    pools = [{"name": "gpu", "hardware": "gb200-nvl72", "count": 8, "partition": "train"}]
    data = onprem(racks, pools=pools, row={"cooling": {"crah_kw": [100, 100, 100], "cdu_kw": [300] * 4}})
    path = write(yaml.safe_dump(data))
    assert _check(cli, path) == (0, {"error": [], "warning": ["PWR-002"] * 8})
    plan = json.loads(cli("plan", path, "-f", "json").stdout)
    assert sum(n["gpu_count"] * n["count"] for n in plan["nodes"]) == 576
    assert [(n["count"], n["gpu_count"]) for n in plan["nodes"]] == [(144, 4)]
    data["site"]["rows"][0]["cooling"]["cdu_kw"] = [300] * 3  # no spare CDU: 600 kW N+1 < 898 kW
    assert "CLG-004" in _check(cli, write(yaml.safe_dump(data), "short.yaml"))[1]["error"]


def test_aws_parallelcluster_p5_sample(cli, write) -> None:
    """AWS's ParallelCluster p5 sample: on-demand p5.48xlarge with the placement group turned off, 32 EFA
    interfaces a node. ParallelCluster's validator warns on an explicit opt-out: NET-006 warns. Verdict: PASS."""
    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 2, "partition": "train",
                       "placement": "none"}])
    data["aws"]["capacity"] = {"type": "on-demand"}
    path = write(yaml.safe_dump(data))
    assert _check(cli, path) == (0, {"error": [], "warning": ["NET-006"]})
    plan = json.loads(cli("plan", path, "-f", "json").stdout)
    assert plan["nodes"][0]["efa_interfaces"] == 32


# Published designs of 2026, held back from the rule tests and checked from outside: each verdict below is worked
# out from the vendors' figures and the rules as docs/policies.md states them, then compared with the CLI's.

def _rack_scale(name: str, cooling: dict) -> dict:
    return rack(name, count=1, u_height=48, max_weight_kg=2000, footprint_m2=1.2, cooling=cooling,
                feeds=[feed(f"{name}-a", "A", 415, 250), feed(f"{name}-b", "B", 415, 250)])


def test_gb300_nvl72_racks_with_an_in_rack_cdu_each(cli, write, tmp_path: Path) -> None:
    """GB300 NVL72: up to 142 kW a rack (NVIDIA's reference architecture), 85 % of it to liquid: 120.7 kW on one
    in-rack CDU of up to 250 kW with N+1 pumps (Supermicro), which keeps its 250 kW with a pump out, so CLG-004
    holds per rack and the row needs no CDU. 415 V 3φ 250 A feeds give 143.8 kW a side: 142 kW is 98.7 % of one
    side after a feed loss (PWR-002 warns past 90 %, fails past 100 %). The 48 × 5.5 kW PSUs split 24/24 carry
    132 kW < 142 kW on one side: PWR-003 warns, once for the pool (NVIDIA caps power). ConnectX-8 runs 800G:
    an XDR Q3400 fabric (a QM9700's 400G ports would fail NET-007). Air: 21.3 kW a rack on its 30 kW (71 %)
    and 42.6 kW on the row's 3 × 100 kW CRAHs (200 kW N+1). Verdict: PASS with 2 × PWR-002 and PWR-003.
    The same racks without the spare pumps have no N+1 (one unit, Σ − largest = 0): CLG-004 fails both."""
    cooling = {"kind": "liquid", "cdu_kw": [250], "cdu_pumps": "n+1", "air_kw": 30}
    pools = [{"name": "gpu", "hardware": "gb300-nvl72", "count": 2, "partition": "train"}]
    data = onprem([_rack_scale("g1", cooling), _rack_scale("g2", cooling)], pools=pools,
                  row={"cooling": {"crah_kw": [100, 100, 100]}})
    data["fabric"] = {"kind": "infiniband", "switch": "q3400"}  # ConnectX-8 at 800G: an XDR switch (NET-007)
    path = write(yaml.safe_dump(data))
    assert _check(cli, path) == (0, {"error": [], "warning": ["PWR-002", "PWR-002", "PWR-003"]})
    assert cli("render", path, "-o", tmp_path / "out").exit_code == 0
    for r in data["site"]["rows"][0]["racks"]:
        r["cooling"]["cdu_pumps"] = "n"
    assert _check(cli, write(yaml.safe_dump(data), "no-spare.yaml"))[1]["error"] == ["CLG-004", "CLG-004"]


def _xe9680_rack(name: str, pool: str) -> dict:
    return rack(name, count=2, pool=pool)


def test_dell_xe9680_mi300x_on_rocm_and_roce(cli, write) -> None:
    """Dell PowerEdge XE9680 with 8 × MI300X: 11.5 kW, 6U, six 2,800 W PSUs (5+1, or 3+3 fault tolerant with
    throttling). Two a rack: 23.0 kW on 415 V 3φ 60 A A/B feeds (34.5 kW a side, 66.7 % after a feed loss) and a
    50 kW rear door (46 %): quiet. After a feed loss each server keeps 3 × 2,800 W = 8.4 kW < 11.5 kW: PWR-003 warns,
    once per pool. ROCm 7.2.2 ships RCCL 2.27.7 and lists amdgpu 30.30; CDNA3 needs ROCm 6.0 or later: SW quiet.
    RoCE on the Ethernet SN5600 with 400G NICs: NET quiet. Verdict: PASS with PWR-003.
    InfiniBand on the same servers with an Ethernet SN5600 is a switch that cannot carry its fabric (NET-008)."""
    pools = [{"name": "gpu", "hardware": "mi300x-8gpu", "count": 4, "partition": "train"}]
    data = onprem([_xe9680_rack("m1", "gpu"), _xe9680_rack("m2", "gpu")], pools=pools)
    data["fabric"] = {"kind": "roce", "switch": "sn5600"}
    data["software"] = {"stack": "rocm", "rocm": "7.2.2", "rccl": "2.27.7", "amdgpu_driver": "30.30.3"}
    path = write(yaml.safe_dump(data))
    assert _check(cli, path) == (0, {"error": [], "warning": ["PWR-003"]})
    data["fabric"]["kind"] = "infiniband"
    assert _check(cli, write(yaml.safe_dump(data), "ib.yaml"))[1]["error"] == ["NET-008"]


def test_nvidia_and_amd_partitions_on_one_controller(cli, write, tmp_path: Path) -> None:
    """A DGX H100 partition and an MI300X partition on one slurmctld, each vendor's pins side by side and no
    `stack`: each pool is checked against its own vendor's set (CUDA 13.2 on driver 595.91.07 for Hopper, ROCm
    7.2.2 for CDNA3), so SW is quiet; PWR-003 warns for both pools (DGX H100 keeps 3 of its 4+2 3.3 kW PSUs, 9.9
    kW < 10.2 kW; XE9680 as above). Verdict: PASS with 2 × PWR-003. The render names the MI300X pool's vendor in one
    group_vars file of its own; both vendors' pins are cluster-wide. A wrong RCCL fails that pool only."""
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 2, "partition": "nvidia"},
             {"name": "mi", "hardware": "mi300x-8gpu", "count": 2, "partition": "amd"}]
    data = onprem([rack("h1", count=2, pool="gpu"), _xe9680_rack("m1", "mi")], pools=pools)
    data["slurm"] = {"partitions": [{"name": "nvidia", "pools": ["gpu"], "default": True},
                                    {"name": "amd", "pools": ["mi"]}]}
    data["software"] = {"rocm": "7.2.2", "rccl": "2.27.7", "amdgpu_driver": "30.30.3"}
    path = write(yaml.safe_dump(data))
    assert _check(cli, path) == (0, {"error": [], "warning": ["PWR-003", "PWR-003"]})
    out = tmp_path / "out"
    assert cli("render", path, "-o", out).exit_code == 0
    group_vars = out / "inventory" / "group_vars"
    assert load_rendered((group_vars / "pool_mi.yml").read_text())["gpu_vendor"] == "amd"
    every = load_rendered((group_vars / "all.yml").read_text())
    assert (every.get("gpu_vendor"), every["rocm_version"], every["nvidia_driver_version"]) == (
        None, "7.2.2", "595.91.07")
    data["software"]["rccl"] = "2.26.6"
    result = cli("check", write(yaml.safe_dump(data), "bad-rccl.yaml"), "-f", "json")
    errors = [f for f in json.loads(result.stdout)["findings"] if f["level"] == "error"]
    assert result.exit_code == 1 and [f["id"] for f in errors] == ["SW-001"] and "mi" in errors[0]["message"]


def test_dgx_b200_needs_the_r570_driver_branch(cli, write, tmp_path: Path) -> None:
    """128 DGX B200 on driver 550.54.14 with CUDA 12.4 and NCCL 2.21.5: a set CUDA 12.4 accepts (its minimum is
    550.54.14), but Blackwell needs the R570 branch, 570.133.20 or later (NVIDIA GPU Operator platform support):
    SW-005 fails in check and render alike. On 570.133.20 with CUDA 12.8 and NCCL 2.26.2 it passes."""
    pools = [{"name": "gpu", "hardware": "dgx-b200", "count": 128, "partition": "train"}]
    data = design(pools, software={"nvidia_driver": "550.54.14", "cuda": "12.4", "nccl": "2.21.5"})
    path = write(yaml.safe_dump(data))
    assert _check(cli, path) == (1, {"error": ["SW-005"], "warning": []})
    assert cli("render", path, "-o", tmp_path / "out").exit_code == 1
    data["software"] = {"nvidia_driver": "570.133.20", "cuda": "12.8", "nccl": "2.26.2"}
    assert _check(cli, write(yaml.safe_dump(data), "r570.yaml")) == (0, {"error": [], "warning": []})
