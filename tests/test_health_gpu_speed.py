"""A GPU that is present but slow, as the health check sees it. The fast tier (prolog, epilog, periodic) reads
each GPU's clock event reasons and PCIe link (nvidia-smi, or amd-smi on AMD nodes) and fails gpu-clocks or
gpu-pcie; the perf tier (`--perf`) runs the GEMM/HBM program on every GPU at once and all_reduce_perf across them
and fails gpu-sdc, gpu-perf or gpu-slow. Every fault is planted through a stand-in on PATH: nvidia-smi answers
with the recorded H100 (tests/fixtures/nvidia-smi), amd-smi with documented MI300X output (tests/fixtures/amd-smi),
the perf program and all_reduce_perf with what their contracts say they print."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.test_health_checks import NODE, RECORD, Node, _script, check_exposition, lines, reason

AMD = ROOT / "tests" / "fixtures" / "amd-smi" / "mi300x-rocm6"
# the recorded idle H100: gpu_idle alone active, PCIe gen 5 of 5, x16 of x16
IDLE = "0, 0x0000000000000001, Active, Not Active, Not Active, Not Active, Not Active, 5, 5, 16, 16"
BUSY = "0, 0x0000000000000000, Not Active, Not Active, Not Active, Not Active, Not Active, 5, 5, 16, 16"
FAULT_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")


def speed_line(gpu: int = 0, *, idle: bool = False, held: tuple[str, ...] = (), gen: str = "5",
               width: str = "16", mask: str = "0x0000000000000000") -> str:
    flags = ["Active" if reason in held else "Not Active" for reason in FAULT_REASONS]
    return ", ".join([str(gpu), mask, "Active" if idle else "Not Active", *flags, gen, "5", width, "16"])


@pytest.fixture
def node(tmp_path: Path) -> Node:
    return Node(tmp_path).set(CHECK_GPU_CLOCKS=1, CHECK_PCIE=1)


def eight(node: Node, *rows: str) -> Node:
    """An 8-GPU H100 node: the given rows, the rest busy and healthy."""
    node.set(GPU_COUNT=8).smi_file("names.txt", "NVIDIA H100 80GB HBM3\n" * 8)
    node.smi_file("ecc.txt", "".join(f"{i}, 0, 0, 0\n" for i in range(8)))
    node.smi_file("recovery.txt", "".join(f"{i}, None\n" for i in range(8)))
    given = {int(row.split(",")[0]): row for row in rows}
    return node.smi_file("speed.txt", "".join(given.get(i, speed_line(i)) + "\n" for i in range(8)))


# --- NVIDIA: the fast tier ----------------------------------------------------------------------------------------

def test_the_recorded_idle_h100_passes_and_exports_its_link(node: Node) -> None:
    result = node.run("--check")
    assert result.returncode == 0, result.stdout
    assert lines(result)[-2:] == [
        "ok   gpu-clocks: no GPU held down by a hardware, thermal or power-brake slowdown (1 GPUs)",
        "ok   gpu-pcie: PCIe links at their maximum width, and generation where busy (1 GPUs)"]
    samples = check_exposition(node.prom_file())
    assert {name: value for name, value in samples.items() if name.startswith("clusterforge_gpu_")} == {
        **{f'clusterforge_gpu_clock_event{{gpu="0",reason="{reason}"}}': "0" for reason in FAULT_REASONS},
        'clusterforge_gpu_pcie_link_gen{gpu="0"}': "5", 'clusterforge_gpu_pcie_link_gen_max{gpu="0"}': "5",
        'clusterforge_gpu_pcie_link_width{gpu="0"}': "16", 'clusterforge_gpu_pcie_link_width_max{gpu="0"}': "16",
        'clusterforge_gpu_idle{gpu="0"}': "1"}
    assert (node.smi / "speed.txt").read_text().strip() == IDLE


@pytest.mark.parametrize(("row", "code", "action", "detail"), [
    (speed_line(held=("hw_slowdown",)), "gpu-clocks", "person", "clocks held down: GPU 0 (hw_slowdown)"),
    (speed_line(held=("hw_slowdown", "hw_thermal_slowdown")), "gpu-clocks", "person",
     "clocks held down: GPU 0 (hw_slowdown, hw_thermal_slowdown)"),
    (speed_line(held=("hw_slowdown", "hw_power_brake_slowdown")), "gpu-clocks", "person",
     "clocks held down: GPU 0 (hw_slowdown, hw_power_brake_slowdown)"),
    (speed_line(idle=True, held=("sw_thermal_slowdown",)), "gpu-clocks", "person",
     "clocks held down: GPU 0 (sw_thermal_slowdown)"),
    (speed_line(width="8"), "gpu-pcie", "reboot", "PCIe link below its maximum: GPU 0 x8 of x16"),
    (speed_line(idle=True, width="8", gen="1"), "gpu-pcie", "reboot", "PCIe link below its maximum: GPU 0 x8 of x16"),
    (speed_line(gen="3"), "gpu-pcie", "reboot", "PCIe link below its maximum: GPU 0 gen 3 of 5 (busy)"),
], ids=["hw-slowdown", "thermal", "power-brake", "sw-thermal", "narrow", "narrow-idle", "gen3-busy"])
def test_a_slow_gpu_drains_with_its_code(node: Node, row: str, code: str, action: str, detail: str) -> None:
    node.smi_file("speed.txt", row + "\n")
    result = node.run()
    assert result.returncode == 1
    assert node.drains() == [reason(code, action, detail)]
    assert f'clusterforge_health_failure{{code="{code}",action="{action}"}}' in node.prom_file()


@pytest.mark.parametrize("row", [
    speed_line(idle=True, gen="1", mask="0x0000000000000001"),  # an idle link drops its generation
    speed_line(mask="0x0000000000000004"),  # sw_power_cap: the power limit, not a fault (not read)
    speed_line(mask="0x0000000000000002"),  # application clocks
    BUSY,
], ids=["idle-gen1", "sw-power-cap", "application-clocks", "busy"])
def test_what_is_not_a_fault_passes(node: Node, row: str) -> None:
    node.smi_file("speed.txt", row + "\n")
    result = node.run("--check")
    assert result.returncode == 0, result.stdout


def test_an_eight_gpu_node_names_each_slow_gpu_and_exports_every_gpu(node: Node) -> None:
    eight(node, speed_line(3, held=("hw_slowdown", "hw_thermal_slowdown")), speed_line(5, width="8"),
          speed_line(6, gen="4"), speed_line(7, idle=True, gen="2"))
    result = node.run("--prolog")
    assert result.returncode == 1
    assert "FAIL gpu-clocks (person): clocks held down: GPU 3 (hw_slowdown, hw_thermal_slowdown)" in lines(result)
    assert "FAIL gpu-pcie (reboot): PCIe link below its maximum: GPU 5 x8 of x16, GPU 6 gen 4 of 5 (busy)" in lines(
        result)
    assert node.drains() == [reason("gpu-clocks", "person", "clocks held down: GPU 3 (hw_slowdown, "
                                    "hw_thermal_slowdown) (+1 more)")]
    samples = check_exposition(node.prom_file())
    assert samples['clusterforge_gpu_clock_event{gpu="3",reason="hw_thermal_slowdown"}'] == "1"
    assert samples['clusterforge_gpu_clock_event{gpu="3",reason="hw_power_brake_slowdown"}'] == "0"
    assert samples['clusterforge_gpu_pcie_link_width{gpu="5"}'] == "8"
    assert samples['clusterforge_gpu_pcie_link_gen{gpu="7"}'] == "2"
    assert samples['clusterforge_gpu_idle{gpu="7"}'] == "1"
    assert len([name for name in samples if name.startswith("clusterforge_gpu_clock_event")]) == 32
    assert len([name for name in samples if name.startswith("clusterforge_gpu_pcie_link_width_max")]) == 8


def test_a_driver_without_the_fields_skips_rather_than_drains(node: Node) -> None:
    node.smi_file("speed.txt", 'Field "pcie.link.gen.gpucurrent" is not a valid field to query.\n', rc=2)
    result = node.run("--check")
    assert result.returncode == 0
    assert "skip gpu-clocks: nvidia-smi clocks query failed: Field \"pcie.link.gen.gpucurrent\" is not a valid " \
           "field to query." in lines(result)
    node.smi_file("speed.txt", "0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n")
    result = node.run("--check")
    assert result.returncode == 0
    assert "skip gpu-pcie: nvidia-smi reports no PCIe link width or generation" in lines(result)
    assert "clusterforge_gpu_pcie_link_gen{" not in node.prom_file()


def test_each_check_has_its_own_switch(node: Node) -> None:
    node.smi_file("speed.txt", speed_line(held=("hw_slowdown",), width="4") + "\n")
    node.set(CHECK_GPU_CLOCKS=0)
    assert [line.split(":")[0] for line in lines(node.run("--check")) if "gpu-clocks" in line or "gpu-pcie" in line] \
        == ["FAIL gpu-pcie (reboot)"]
    node.set(CHECK_GPU_CLOCKS=1, CHECK_PCIE=0)
    assert [line.split(":")[0] for line in lines(node.run("--check")) if "gpu-clocks" in line or "gpu-pcie" in line] \
        == ["FAIL gpu-clocks (person)"]
    node.set(CHECK_GPU_CLOCKS=0)
    assert node.run("--check").returncode == 0
    assert "speed.txt" not in {argv[0] for argv in node.calls("nvidia-smi")}


def test_the_speed_query_runs_in_the_same_parallel_batch(node: Node) -> None:
    """A hung nvidia-smi costs one SMI_TIMEOUT for every query together, not one each."""
    node.set(SMI_TIMEOUT=1, CHECK_GPU_CLOCKS=1, CHECK_PCIE=1)
    (node.tmp / "smi-sleep").write_text("30")
    start = time.monotonic()
    node.run("--check", timeout=20)
    assert time.monotonic() - start < 3


# --- AMD: amd-smi ---------------------------------------------------------------------------------------------------

def amd(node: Node, envelope: bool = False, **edits: Any) -> Node:
    """An MI300X node: amd-smi answers from the fixture, edited per GPU ("metric.0.pcie.width": 8)."""
    folder = node.tmp / "amd"
    folder.mkdir(exist_ok=True)
    for name in ("metric", "throttle", "bus"):
        data = json.loads((AMD / f"{name}.json").read_text())
        for path, value in edits.items():
            file, gpu, *keys = path.split(".")
            if file == name:
                target = data[int(gpu)]
                for key in keys[:-1]:
                    target = target[key]
                target[keys[-1]] = value
        (folder / f"{name}.json").write_text(json.dumps({"gpu_data": data} if envelope else data))
    _script(node.bin / "amd-smi", RECORD + 'case "$*" in\n'
            '  "metric --usage --pcie --json") f=metric ;;\n  "metric --throttle --json") f=throttle ;;\n'
            '  "static --bus --json") f=bus ;;\n  *) echo "fake amd-smi: unexpected arguments: $*" >&2; exit 99 ;;\n'
            'esac\ncat "$CF_FAKE/amd/$f.json"\n')
    return node.set(CHECK_GPUS=0, CHECK_XID=0, CHECK_ECC=0, CHECK_REMAP=0, CHECK_AMD_GPUS=1, GPU_COUNT=2,
                    GPU_MODEL="MI300X")


@pytest.mark.parametrize("envelope", [False, True], ids=["rocm6-list", "rocm7-gpu-data"])
def test_an_amd_node_passes_and_exports_the_same_metrics(node: Node, envelope: bool) -> None:
    result = amd(node, envelope).run("--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result) == [
        "ok   gpu-clocks: no GPU held down by a hardware, thermal or power-brake slowdown (2 GPUs)",
        "ok   gpu-pcie: PCIe links at their maximum width, and generation where busy (2 GPUs)"]
    assert sorted(" ".join(argv) for argv in node.calls("amd-smi")) == [
        "metric --throttle --json", "metric --usage --pcie --json", "static --bus --json"]
    assert node.calls("nvidia-smi") == []
    samples = check_exposition(node.prom_file())
    assert samples['clusterforge_gpu_clock_event{gpu="1",reason="prochot"}'] == "0"
    assert samples['clusterforge_gpu_clock_event{gpu="1",reason="hbm_thermal"}'] == "0"
    assert samples['clusterforge_gpu_pcie_link_gen{gpu="1"}'] == "5"
    assert samples['clusterforge_gpu_pcie_link_width_max{gpu="0"}'] == "16"
    assert samples['clusterforge_gpu_idle{gpu="0"}'] == "1"


@pytest.mark.parametrize(("edits", "failure"), [
    ({"throttle.1.throttle.prochot_violation_status": "ACTIVE"},
     "FAIL gpu-clocks (person): clocks held down: GPU 1 (prochot)"),
    ({"throttle.0.throttle.hbm_thermal_violation_status": "ACTIVE",
      "throttle.0.throttle.socket_thermal_violation_status": "ACTIVE"},
     "FAIL gpu-clocks (person): clocks held down: GPU 0 (socket_thermal, hbm_thermal)"),
    ({"metric.1.pcie.width": 8}, "FAIL gpu-pcie (reboot): PCIe link below its maximum: GPU 1 x8 of x16"),
    ({"metric.0.pcie.speed": {"value": 16, "unit": "GT/s"}, "metric.0.usage.gfx_activity": {"value": 97, "unit": "%"}},
     "FAIL gpu-pcie (reboot): PCIe link below its maximum: GPU 0 gen 4 of 5 (busy)"),
], ids=["prochot", "thermal", "narrow", "gen4-busy"])
def test_a_slow_amd_gpu_fails_with_the_same_codes(node: Node, edits: dict[str, Any], failure: str) -> None:
    result = amd(node, **edits).run("--check")
    assert result.returncode == 1
    assert failure in lines(result), result.stdout


@pytest.mark.parametrize("edits", [
    {"metric.0.pcie.speed": {"value": 2.5, "unit": "GT/s"}},  # idle: the link drops its speed
    {"throttle.0.throttle.ppt_violation_status": "ACTIVE"},  # the power cap: not a fault
], ids=["idle-gen1", "ppt"])
def test_what_is_not_a_fault_on_amd_passes(node: Node, edits: dict[str, Any]) -> None:
    assert amd(node, **edits).run("--check").returncode == 0


def test_an_amd_gpu_without_violation_status_skips_the_clock_check(node: Node) -> None:
    """Before MI300 amd-smi has no violation status: every reason reads N/A."""
    statuses = {f"throttle.{gpu}.throttle.{r}_violation_status": "N/A" for gpu in (0, 1)
                for r in ("prochot", "socket_thermal", "vr_thermal", "hbm_thermal")}
    result = amd(node, **statuses).run("--check")
    assert result.returncode == 0
    assert "skip gpu-clocks: amd-smi reports no clock event reasons" in lines(result)
    assert "clusterforge_gpu_clock_event{" not in node.prom_file()


def test_amd_smi_failing_is_a_missing_gpu(node: Node) -> None:
    amd(node)
    _script(node.bin / "amd-smi", 'echo "AMDSMI_STATUS_INIT_ERROR: amdgpu driver not loaded" >&2; exit 1\n')
    result = node.run()
    assert node.drains() == [reason("gpu-missing", "reboot",
                                    "amd-smi metric failed (1): AMDSMI_STATUS_INIT_ERROR: amdgpu driver not loaded")]
    assert result.returncode == 1


# --- the perf tier --------------------------------------------------------------------------------------------------

H100 = "NVIDIA H100 80GB HBM3"
CHECKSUM = "9f2c4e1a7b3d5c60"


def perf_line(index: int, **changes: Any) -> dict[str, Any]:
    line = {"index": index, "name": H100, "gemm_tflops": 793.1, "hbm_gbps": 3030.5, "checksum": CHECKSUM,
            "checksum_ok": True, "bad_rows": 0, "bad_cols": 0, "seconds": 1.4}
    return {**line, **changes}


class Perf:
    """The perf program and all_reduce_perf: what each device prints, its exit status, how long it takes."""

    def __init__(self, node: Node, gpus: int = 8) -> None:
        self.node = node
        self.dir = node.tmp / "perf"
        self.dir.mkdir()
        self.program = node.tmp / "clusterforge-gpu-perf"
        _script(self.program, RECORD + '[ "$1" = --device ] || exit 64\n'
                'd="$CF_FAKE/perf/$2"\n[ -f "$d.sleep" ] && sleep "$(cat "$d.sleep")"\n'
                'echo "cuBLAS: a warning on stderr" >&2\ncat "$d.json" 2>/dev/null\n'
                'exit "$(cat "$d.rc" 2>/dev/null || echo 0)"\n')
        for index in range(gpus):
            self.device(index, perf_line(index))
        node.set(GPU_COUNT=gpus, PERF_PROGRAM=self.program, CHECK_XID=0)
        node.smi_file("names.txt", f"{H100}\n" * gpus)
        self.nccl_bin = node.tmp / "nccl-bin"

    def device(self, index: int, line: dict[str, Any], rc: int = 0, sleep: float = 0) -> Perf:
        (self.dir / f"{index}.json").write_text(json.dumps(line) + "\n")
        (self.dir / f"{index}.rc").write_text(str(rc))
        if sleep:
            (self.dir / f"{index}.sleep").write_text(str(sleep))
        return self

    def nccl(self, busbw: str = "361.54", wrong: int = 0, rc: int = 0) -> Perf:
        self.nccl_bin.mkdir(exist_ok=True)
        out = (f"# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 1073741824 step: 1048576(bytes) warmup iters: 5\n"
               f"  1073741824     268435456     float     sum      -1   5210.1  206.09  360.65      0\n"
               f"# Out of bounds values : {wrong} {'OK' if not wrong else 'FAILED'}\n"
               f"# Avg bus bandwidth    : {busbw} \n#\n")
        (self.node.tmp / "nccl.out").write_text(out)
        _script(self.nccl_bin / "all_reduce_perf", RECORD + f'cat "$CF_FAKE/nccl.out"\nexit {rc}\n')
        return self

    def run(self, *args: str) -> tuple[int, dict[str, Any]]:
        result = self.node.run("--perf", "--json", *args, extra_path=self.nccl_bin if self.nccl_bin.exists() else None)
        out = result.stdout.splitlines()
        assert len(out) == 1, result.stdout + result.stderr
        data = json.loads(out[0])
        assert list(data) == ["node", "status", "seconds", "gpus", "nccl_busbw_gbps", "codes", "detail"]
        assert data["node"] == NODE and isinstance(data["seconds"], float)
        return result.returncode, data

    def prom(self) -> dict[str, str]:
        return check_exposition((self.node.prom / "clusterforge_gpu_perf.prom").read_text())


@pytest.fixture
def perf(tmp_path: Path) -> Perf:
    return Perf(Node(tmp_path))


def test_a_healthy_node_passes_on_every_gpu_at_once(perf: Perf) -> None:
    for index in range(8):
        perf.device(index, perf_line(index), sleep=1)
    perf.nccl()
    start = time.monotonic()
    rc, data = perf.run()
    assert time.monotonic() - start < 4  # 8 GPUs of 1 s each, in parallel
    assert rc == 0 and data["status"] == "pass" and data["codes"] == []
    assert data["gpus"] == [{**perf_line(i), "status": "pass"} for i in range(8)]
    assert data["nccl_busbw_gbps"] == 361.54
    assert sorted(perf.node.calls("clusterforge-gpu-perf")) == [["--device", str(i)] for i in range(8)]
    assert perf.node.calls("all_reduce_perf") == [["-b", "1G", "-e", "1G", "-g", "8"]]
    samples = perf.prom()
    assert samples[f'clusterforge_gpu_gemm_tflops{{gpu="7",name="{H100}"}}'] == "793.1"
    assert samples[f'clusterforge_gpu_hbm_gbps{{gpu="0",name="{H100}"}}'] == "3030.5"
    assert [samples[f'clusterforge_gpu_checksum_ok{{gpu="{i}",name="{H100}"}}'] for i in range(8)] == ["1"] * 8
    assert samples['clusterforge_nccl_allreduce_busbw_gbps{scope="node"}'] == "361.54"
    assert abs(int(samples["clusterforge_gpu_perf_last_run_timestamp_seconds"]) - time.time()) < 30
    assert perf.node.calls("scontrol") == []


def test_a_gpu_whose_checksum_differs_from_its_peers_is_a_wrong_answer_not_slowness(perf: Perf) -> None:
    perf.device(3, perf_line(3, checksum="0000000000000001", gemm_tflops=120.0))
    perf.node.set(PERF_MIN_GEMM_TFLOPS=600)
    rc, data = perf.run("--drain")
    assert rc == 1 and data["status"] == "fail"
    assert data["codes"][0] == "gpu-sdc"
    assert data["detail"].startswith(
        f"GPU 3 ({H100}): checksum 0000000000000001, the node's other GPUs give {CHECKSUM}")
    assert [gpu["status"] for gpu in data["gpus"]] == ["pass"] * 3 + ["fail"] + ["pass"] * 4
    assert perf.node.drains()[0].startswith(reason("gpu-sdc", "person", f"GPU 3 ({H100}): checksum 0000000000000001"))
    assert perf.prom()[f'clusterforge_gpu_checksum_ok{{gpu="3",name="{H100}"}}'] == "0"


@pytest.mark.parametrize(("line", "conf", "code", "detail"), [
    (perf_line(2, checksum_ok=False, bad_rows=3, bad_cols=1), {}, "gpu-sdc",
     f"GPU 2 ({H100}): wrong GEMM product (3 bad rows, 1 bad columns)"),
    (perf_line(2), {"PERF_CHECKSUM": "ffffffffffffffff"}, "gpu-sdc",
     f"GPU 0 ({H100}): checksum {CHECKSUM}, recorded ffffffffffffffff"),
    (perf_line(2, gemm_tflops=401.7), {"PERF_MIN_GEMM_TFLOPS": 600}, "gpu-slow",
     f"GPU 2 ({H100}): GEMM 401.7 TFLOP/s, below 600"),
    (perf_line(2, hbm_gbps=1500.0), {"PERF_MIN_HBM_GBPS": 2500}, "gpu-slow",
     f"GPU 2 ({H100}): HBM 1500.0 GB/s, below 2500"),
], ids=["checksum-not-ok", "recorded-checksum", "slow-gemm", "slow-hbm"])
def test_each_perf_fault_has_its_code(perf: Perf, line: dict[str, Any], conf: dict[str, Any], code: str,
                                      detail: str) -> None:
    perf.device(2, line).node.set(**conf)
    rc, data = perf.run()
    assert rc == 1 and data["codes"] == [code]
    assert data["detail"].startswith(detail), data["detail"]


def test_a_failing_or_hung_program_is_gpu_perf(perf: Perf) -> None:
    perf.device(1, {"index": 1, "error": "cudaErrorECCUncorrectable: uncorrectable ECC error encountered"}, rc=1)
    perf.device(6, perf_line(6), sleep=30).node.set(PERF_TIMEOUT=1)
    rc, data = perf.run()
    assert rc == 1 and data["codes"] == ["gpu-perf"]
    assert data["detail"] == ("GPU 1: the perf program failed (exit 1): cudaErrorECCUncorrectable: uncorrectable ECC "
                              "error encountered; GPU 6: timed out after 1 s; NCCL all-reduce skipped: "
                              "all_reduce_perf (nccl-tests) not installed")
    assert data["gpus"][1] == {"index": 1, "error": "cudaErrorECCUncorrectable: uncorrectable ECC error encountered",
                               "status": "fail"}
    assert data["nccl_busbw_gbps"] is None
    assert 'gpu="1"' not in (perf.node.prom / "clusterforge_gpu_perf.prom").read_text()
    assert "clusterforge_nccl_allreduce_busbw_gbps" not in perf.prom()


@pytest.mark.parametrize(("nccl", "code", "detail"), [
    ({"wrong": 4}, "gpu-sdc", "all_reduce_perf: 4 wrong values"),
    ({"busbw": "120.50"}, "gpu-slow", "NCCL all-reduce 120.50 GB/s bus bandwidth, below 300"),
    ({"rc": 3}, "gpu-perf", "all_reduce_perf failed (exit 3): # nThread 1 nGpus 8"),
], ids=["wrong-values", "slow", "fails"])
def test_nccl_faults(perf: Perf, nccl: dict[str, Any], code: str, detail: str) -> None:
    perf.nccl(**nccl).node.set(PERF_MIN_NCCL_BUSBW_GBPS=300)
    rc, data = perf.run()
    assert rc == 1 and data["codes"] == [code]
    assert data["detail"].startswith(detail), data["detail"]


def test_one_gpu_skips_nccl_and_says_why(tmp_path: Path) -> None:
    perf = Perf(Node(tmp_path), gpus=1).nccl()
    rc, data = perf.run()
    assert rc == 0 and data["nccl_busbw_gbps"] is None
    assert data["detail"] == "1 GPUs pass; NCCL all-reduce skipped: one GPU"
    assert perf.node.calls("all_reduce_perf") == []


def test_the_readable_output_has_a_line_per_gpu_and_a_verdict(perf: Perf) -> None:
    perf.device(4, perf_line(4, checksum_ok=False))
    result = perf.node.run("--perf")
    out = result.stdout.splitlines()
    assert result.returncode == 1 and len(out) == 9
    assert out[0] == f"pass GPU 0 ({H100}): GEMM 793.1 TFLOP/s, HBM 3030.5 GB/s, checksum {CHECKSUM}, 1.4 s"
    assert out[4] == f"fail GPU 4 ({H100}): GEMM 793.1 TFLOP/s, HBM 3030.5 GB/s, checksum {CHECKSUM} (wrong), 1.4 s"
    assert out[8].startswith(f"fail perf on {NODE} in ")
    assert out[8].endswith(f"s: GPU 4 ({H100}): wrong GEMM product (0 bad rows, 0 bad columns); "
                           "NCCL all-reduce skipped: all_reduce_perf (nccl-tests) not installed")


@pytest.mark.parametrize(("gpus", "program", "detail"), [
    (0, True, "no GPU on this node"),
    (8, False, "no perf program at {program} (built at bake time where CUDA's nvcc is)"),
], ids=["no-gpu", "no-program"])
def test_perf_is_skipped_and_says_why(perf: Perf, gpus: int, program: bool, detail: str) -> None:
    perf.node.set(GPU_COUNT=gpus, CHECK_GPUS=int(bool(gpus)))
    if not program:
        perf.program.unlink()
    rc, data = perf.run("--drain")
    assert rc == 0 and data["status"] == "skipped" and data["gpus"] == [] and data["codes"] == []
    assert data["detail"] == detail.format(program=perf.program)
    assert perf.node.calls("scontrol") == []
    assert not (perf.node.prom / "clusterforge_gpu_perf.prom").exists()


def test_perf_is_never_part_of_the_fast_tier(perf: Perf) -> None:
    perf.node.set(CHECK_GPU_CLOCKS=1, CHECK_PCIE=1)
    perf.node.smi_file("speed.txt", "".join(speed_line(i) + "\n" for i in range(8)))
    perf.node.smi_file("ecc.txt", "".join(f"{i}, 0, 0, 0\n" for i in range(8)))
    for mode in ("--prolog", "--epilog", "--check"):
        perf.node.run(mode)
    perf.node.run()
    assert perf.node.calls("clusterforge-gpu-perf") == []

