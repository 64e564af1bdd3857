"""The fleet analysis of `clusterforge health perf`: in a fleet of 12,500 nodes × 8 GPUs with a seeded normal spread,
exactly the planted slow, wrong and missing ones are named, each in its class, and nothing else."""

from __future__ import annotations

import random

import pytest

from clusterforge.catalog.software import GpuModelRow
from clusterforge.operations.perf_run import GpuResult, NodeResult, with_missing
from clusterforge.operations.stragglers import Peak, analyse, catalog_peaks, drains, grouped, normalized
from clusterforge.policies.config import PerfTolerances
from clusterforge.target_kernel import load_catalog

H100 = "NVIDIA H100 80GB HBM3"
GEMM, HBM = 793.1, 3030.5  # an H100 80GB HBM3 as measured: bf16 8192^3 GEMM and a device-to-device copy
CHECKSUM = "9f2c0a5b7e1d3c48"
PEAKS = {normalized(H100): Peak("H100-SXM5", 989.0, 3350.0)}
DEFAULTS = PerfTolerances()


def gpu(index: int, gemm: float = GEMM, hbm: float = HBM, checksum: str = CHECKSUM, ok: bool = True,
        name: str = H100) -> GpuResult:
    return GpuResult(index, name, gemm, hbm, checksum, ok)


def fleet(nodes: int, seed: int = 7, spread: float = 0.01, name: str = H100, gemm: float = GEMM,
          hbm: float = HBM) -> list[NodeResult]:
    """`nodes` healthy nodes of 8 GPUs, each figure normal around the measured one (σ = `spread`: ±3 % at 3σ)."""
    rng = random.Random(seed)
    return [NodeResult(f"gpu-{n:05d}", "pass", 2.1,
                       tuple(gpu(i, gemm * rng.gauss(1, spread), hbm * rng.gauss(1, spread), name=name)
                             for i in range(8)))
            for n in range(1, nodes + 1)]


def planted(nodes: list[NodeResult], node: str, index: int, **change: object) -> list[NodeResult]:
    """The fleet with one GPU of `node` changed (figures relative to its own: gemm=0.8 is 20 % slower)."""
    out = []
    for result in nodes:
        if result.node == node:
            gpus = list(result.gpus)
            old = gpus[index]
            gpus[index] = GpuResult(old.index, old.name,
                                    old.gemm_tflops * float(change.get("gemm", 1.0)),  # type: ignore[operator, arg-type]
                                    old.hbm_gbps * float(change.get("hbm", 1.0)),  # type: ignore[operator, arg-type]
                                    str(change.get("checksum", old.checksum)), bool(change.get("ok", True)))
            result = NodeResult(result.node, result.status, result.seconds, tuple(gpus))
        out.append(result)
    return out


def named(nodes: list[NodeResult], peaks: dict[str, Peak] = PEAKS,
          tolerances: PerfTolerances = DEFAULTS) -> set[tuple[str, int | None, str, str]]:
    return {(o.node, o.gpu, o.kind, o.metric) for o in analyse(nodes, peaks, tolerances).outliers}


@pytest.fixture(scope="module")
def big_fleet() -> list[NodeResult]:
    return fleet(12_500)


def test_a_healthy_fleet_of_12500_nodes_names_no_one(big_fleet: list[NodeResult]) -> None:
    report = analyse(big_fleet, PEAKS, DEFAULTS)
    assert report.ok and report.gpus == 100_000
    [h100] = report.medians
    assert h100.model == "H100-SXM5" and h100.gpus == 100_000
    assert h100.gemm_tflops == pytest.approx(GEMM, rel=0.001) and h100.hbm_gbps == pytest.approx(HBM, rel=0.001)
    assert report.reference_checksum == CHECKSUM and report.reference_count == 100_000


def test_exactly_the_planted_ones_are_named_each_in_its_class(big_fleet: list[NodeResult]) -> None:
    nodes = planted(big_fleet, "gpu-00101", 3, gemm=0.80)  # GEMM 20 % short
    nodes = planted(nodes, "gpu-04242", 7, hbm=0.85)  # HBM 15 % short
    nodes = planted(nodes, "gpu-07777", 0, gemm=1.05, checksum="0123456789abcdef")  # wrong, and fast
    nodes = [n for n in nodes if n.node != "gpu-12000"]  # printed nothing
    nodes = with_missing(nodes, [f"gpu-{n:05d}" for n in range(1, 12_501)])
    assert named(nodes) == {("gpu-00101", 3, "slow", "gemm"), ("gpu-04242", 7, "slow", "hbm"),
                            ("gpu-07777", 0, "corruption", "checksum"), ("gpu-12000", None, "missing", "")}
    report = analyse(nodes, PEAKS, DEFAULTS)
    slow = next(o for o in report.outliers if o.node == "gpu-00101")
    assert slow.code == "gpu-slow" and slow.short_pct == pytest.approx(20, abs=3)
    assert slow.median == pytest.approx(GEMM, rel=0.001) and "fleet median" in slow.detail
    wrong = next(o for o in report.outliers if o.node == "gpu-07777")
    assert wrong.code == "gpu-sdc" and wrong.reason == "checksum differs from the fleet's"
    assert next(o for o in report.outliers if o.node == "gpu-12000").code == "gpu-perf"


def test_a_gpu_its_node_found_wrong_is_corruption_even_with_the_fleets_checksum() -> None:
    nodes = planted(fleet(50), "gpu-00003", 2, ok=False, gemm=0.5)
    assert named(nodes) == {("gpu-00003", 2, "corruption", "checksum")}


def test_a_gpu_error_and_a_failing_node_without_figures_are_errors() -> None:
    nodes = fleet(20)
    broken = NodeResult("gpu-00005", "fail", 1.0,
                        (*nodes[4].gpus[:7], GpuResult(7, H100, None, None, None, None, "CUDA error: out of memory")))
    silent = NodeResult("gpu-00006", "fail", 0.0, (), ("gpu-perf",), "nvidia-smi failed")
    nodes[4:6] = [broken, silent]
    assert named(nodes) == {("gpu-00005", 7, "error", ""), ("gpu-00006", None, "error", "")}


def test_a_fleet_slow_as_a_whole_is_below_the_floor_of_its_peak() -> None:
    """Power-capped everywhere at 45 % of the datasheet GEMM: the median is no help, the floor (50 %) is."""
    nodes = fleet(4, gemm=989 * 0.45)
    report = analyse(nodes, PEAKS, DEFAULTS)
    assert {(o.kind, o.reason) for o in report.outliers} == {("slow", "GEMM below 50% of its peak")}
    assert len(report.outliers) == 32


def test_measured_h100_figures_clear_the_default_floors_of_the_catalogs_peaks() -> None:
    rows = [row for _, row in load_catalog().software.rows() if isinstance(row, GpuModelRow)]
    peak = catalog_peaks(rows)[normalized(H100)]
    assert (peak.model, peak.gemm_tflops, peak.hbm_gbps) == ("H100-SXM5", 989.0, 3350.0)
    assert named(fleet(2), {normalized(H100): peak}) == set()
    assert len(named(fleet(2, gemm=989 * 0.49), {normalized(H100): peak})) == 16


def test_models_are_judged_apart_and_an_unknown_name_against_itself() -> None:
    h100 = fleet(30)
    mystery = [NodeResult(f"odd-{n:02d}", "pass", 2.0, tuple(gpu(i, 400.0, 1500.0, name="Mystery GPU X")
                                                             for i in range(8))) for n in range(1, 5)]
    mystery = planted(mystery, "odd-02", 5, gemm=0.7)
    report = analyse(h100 + mystery, PEAKS, DEFAULTS)
    assert {(o.node, o.gpu, o.model) for o in report.outliers} == {("odd-02", 5, "Mystery GPU X")}
    assert {(m.label, m.model) for m in report.medians} == {("H100-SXM5", "H100-SXM5"), ("Mystery GPU X", None)}


def test_the_tolerance_decides_how_far_below_the_median_is_slow() -> None:
    nodes = planted(fleet(40), "gpu-00009", 1, gemm=0.93)  # 7 % short
    assert named(nodes) == set()
    assert named(nodes, tolerances=PerfTolerances(fleet_tolerance=0.05)) == {("gpu-00009", 1, "slow", "gemm")}


def test_drains_are_one_per_reason_code_with_the_nodes_as_one_hostlist() -> None:
    nodes = planted(fleet(40), "gpu-00010", 0, gemm=0.7)
    nodes = planted(nodes, "gpu-00011", 4, hbm=0.7)
    nodes = planted(nodes, "gpu-00012", 4, hbm=0.7)
    nodes = planted(nodes, "gpu-00012", 5, checksum="ffff")  # also wrong: drained for corruption only
    nodes = planted(nodes, "gpu-00030", 2, checksum="ffff")
    nodes[38] = NodeResult("gpu-00039", "missing", 0.0, ())  # named, never drained
    planned = drains(analyse(nodes, PEAKS, DEFAULTS).outliers)
    assert [d.argv() for d in planned] == [
        ["scontrol", "update", "NodeName=gpu-[00012,00030]", "State=DRAIN",
         "Reason=clusterforge-health: gpu-sdc (person): a GPU computed a wrong GEMM checksum against the fleet "
         "(clusterforge health perf)"],
        ["scontrol", "update", "NodeName=gpu-[00010-00011]", "State=DRAIN",
         "Reason=clusterforge-health: gpu-slow (person): GEMM or memory bandwidth of a GPU below the fleet "
         "(clusterforge health perf)"]]
    assert all(len(d.argv()[-1]) <= 200 + len("Reason=") for d in planned)


def test_outliers_group_by_class_reason_and_model() -> None:
    nodes = fleet(40)
    for n in (3, 4, 5, 20):
        nodes = planted(nodes, f"gpu-{n:05d}", 1, gemm=0.75)
    groups = grouped(analyse(nodes, PEAKS, DEFAULTS).outliers)
    assert [(g.kind, g.reason, g.model, g.nodes, g.gpus) for g in groups] == [
        ("slow", "GEMM below the fleet median", "H100-SXM5", ["gpu-00003", "gpu-00004", "gpu-00005", "gpu-00020"], 4)]


def test_a_node_without_a_readable_result_of_its_own_is_an_error_drained_for_it() -> None:
    """A node whose task printed several results, or another node's (perf_run.UNREADABLE): nothing of it is judged
    or counted in the fleet, and it is drained as gpu-perf, never the node it named."""
    nodes = fleet(20)
    nodes[6] = NodeResult("gpu-00007", "unreadable", 0.0, (), (), "printed a result naming gpu-00001")
    report = analyse(nodes, PEAKS, DEFAULTS)
    assert [(o.node, o.kind, o.reason, o.detail) for o in report.outliers] == [
        ("gpu-00007", "error", "no readable result of its own", "printed a result naming gpu-00001")]
    assert report.medians[0].gpus == 19 * 8
    [drain] = drains(report.outliers)
    assert (drain.code, drain.hostlist) == ("gpu-perf", "gpu-00007")
    assert "printed no readable result of its own" in drain.argv()[-1] and len(drain.argv()[-1]) <= 207
