"""The alerts for a GPU that is slow or wrong (templates/alerts-gpu-perf.yml.j2), run through `promtool test
rules` on the monitoring role's rendered rules with synthetic series named as the health check writes them
(node exporter's textfile collector; every series also carries the scrape's instance, job and node labels):
clusterforge_gpu_clock_event{gpu,reason}, clusterforge_gpu_pcie_link_{gen,width}[_max]{gpu}, clusterforge_gpu_idle,
and the perf tier's clusterforge_gpu_gemm_tflops, _hbm_gbps and _checksum_ok{gpu,name}.

Each alert fires on a bad GPU and stays silent on a clean one: a hardware slowdown held for the hold (not a power
cap, not one run's reading); a narrower PCIe link, or a lower generation while busy (not an idle GPU at Gen1); one
slow GPU among 16 of its model (not 16 equal ones, not one within the tolerance, not among too few peers); a
checksum that does not match.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.test_monitoring_rules import (
    TESTED_ELSEWHERE,
    at,
    fired,
    node,
    promtool_test,
    render_role,
    severity,
)

WARN_PERSON, CRIT_PERSON = severity("warning", "person"), severity("critical", "person")
H100 = "NVIDIA H100 80GB HBM3"


def gpu(host: str, index: int, **extra: str) -> str:
    return node(host) + f',gpu="{index}"' + "".join(f',{k}="{v}"' for k, v in extra.items())


def perf(metric: str, name: str, values: dict[tuple[str, int], float], default: float,
         hosts: tuple[str, ...], per_host: int) -> dict[str, str]:
    """One perf-tier figure for every GPU of `hosts` (per_host each): `default`, or its value in `values`."""
    return {f"{metric}{{{gpu(h, i, name=name)}}}": f"{values.get((h, i), default):g}x10"
            for h in hosts for i in range(per_host)}


# alert -> (series interval, {series: values}, [checks])
CASES: dict[str, tuple[str, dict[str, str], list[dict[str, Any]]]] = {
    "GpuHardwareSlowdown": ("1m", {
        f'clusterforge_gpu_clock_event{{{gpu("g1", 0, reason="hw_thermal_slowdown")}}}': "1x20",
        f'clusterforge_gpu_clock_event{{{gpu("g1", 1, reason="hw_power_brake_slowdown")}}}': "0x8 1x12",
        # a power cap is the workload's, not a fault
        f'clusterforge_gpu_clock_event{{{gpu("g1", 2, reason="sw_power_cap")}}}': "1x20",
        # one health run's reading (it stands 300 s), then clear
        f'clusterforge_gpu_clock_event{{{gpu("g1", 3, reason="hw_slowdown")}}}': "0 1x5 0x14",
        # a clean GPU
        **{f'clusterforge_gpu_clock_event{{{gpu("g2", 0, reason=r)}}}': "0x20"
           for r in ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")},
    }, [fired("GpuHardwareSlowdown", "9m"),                     # `for: 600s`: still pending
        fired("GpuHardwareSlowdown", "10m", {**at("g1", gpu="0", reason="hw_thermal_slowdown"), **WARN_PERSON}),
        fired("GpuHardwareSlowdown", "19m", {**at("g1", gpu="0", reason="hw_thermal_slowdown"), **WARN_PERSON},
              {**at("g1", gpu="1", reason="hw_power_brake_slowdown"), **WARN_PERSON})]),
    "GpuPcieLinkDegraded": ("1m", {
        # p1 GPU 0: x8 of x16 while idle (the width never drops for power saving)
        f'clusterforge_gpu_pcie_link_width{{{gpu("p1", 0)}}}': "8x15",
        f'clusterforge_gpu_pcie_link_gen{{{gpu("p1", 0)}}}': "1x15",
        f'clusterforge_gpu_idle{{{gpu("p1", 0)}}}': "1x15",
        # p1 GPU 1: idle at Gen1 of Gen5, full width: power saving, not degraded
        f'clusterforge_gpu_pcie_link_width{{{gpu("p1", 1)}}}': "16x15",
        f'clusterforge_gpu_pcie_link_gen{{{gpu("p1", 1)}}}': "1x15",
        f'clusterforge_gpu_idle{{{gpu("p1", 1)}}}': "1x15",
        # p1 GPU 2: busy at Gen4 of Gen5
        f'clusterforge_gpu_pcie_link_width{{{gpu("p1", 2)}}}': "16x15",
        f'clusterforge_gpu_pcie_link_gen{{{gpu("p1", 2)}}}': "4x15",
        f'clusterforge_gpu_idle{{{gpu("p1", 2)}}}': "0x15",
        # p1 GPU 3: busy at Gen5 x16, as it should be
        f'clusterforge_gpu_pcie_link_width{{{gpu("p1", 3)}}}': "16x15",
        f'clusterforge_gpu_pcie_link_gen{{{gpu("p1", 3)}}}': "5x15",
        f'clusterforge_gpu_idle{{{gpu("p1", 3)}}}': "0x15",
        **{f'clusterforge_gpu_pcie_link_width_max{{{gpu("p1", i)}}}': "16x15" for i in range(4)},
        **{f'clusterforge_gpu_pcie_link_gen_max{{{gpu("p1", i)}}}': "5x15" for i in range(4)},
    }, [fired("GpuPcieLinkDegraded", "9m"),
        fired("GpuPcieLinkDegraded", "10m", {**at("p1", gpu="0", link="width"), **WARN_PERSON},
              {**at("p1", gpu="2", link="generation"), **WARN_PERSON})]),
    "GpuStraggler": ("1m", {
        # 16 H100s on two nodes: GPU 3 of s1 at 600 TFLOPS (more than 10 % under the median 700), GPU 4 of s1 at
        # 640 (within it), GPU 5 of s2's HBM at 2,500 GB/s (under 3,000 · 0.9)
        **perf("clusterforge_gpu_gemm_tflops", H100, {("s1", 3): 600, ("s1", 4): 640}, 700, ("s1", "s2"), 8),
        **perf("clusterforge_gpu_hbm_gbps", H100, {("s2", 5): 2500}, 3000, ("s1", "s2"), 8),
        # 16 equal B200s: nothing
        **perf("clusterforge_gpu_gemm_tflops", "B200", {}, 1500, ("b1", "b2"), 8),
        **perf("clusterforge_gpu_hbm_gbps", "B200", {}, 6000, ("b1", "b2"), 8),
        # 4 L40S, one slow: too few peers for a median
        **perf("clusterforge_gpu_gemm_tflops", "L40S", {("l1", 0): 100}, 360, ("l1",), 4),
    }, [fired("GpuStraggler", "1m", {**at("s1", gpu="3", name=H100, figure="gemm_tflops"), **WARN_PERSON},
              {**at("s2", gpu="5", name=H100, figure="hbm_gbps"), **WARN_PERSON})]),
    "GpuWrongAnswer": ("1m", {
        f'clusterforge_gpu_checksum_ok{{{gpu("s1", 0, name=H100)}}}': "0x3",
        f'clusterforge_gpu_checksum_ok{{{gpu("s1", 1, name=H100)}}}': "1x3",
    }, [fired("GpuWrongAnswer", "1m", {**at("s1", gpu="0", name=H100), **CRIT_PERSON})]),
}


def test_the_cases_are_the_alerts_this_module_claims() -> None:
    assert sorted(CASES) == sorted(a for a, module in TESTED_ELSEWHERE.items() if module == Path(__file__).name)


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_role(tmp_path_factory.mktemp("gpu-perf"), 8, []) / "rules" / "clusterforge-gpu-perf.yml"


def unit_rules(rules: Path, out: Path, keep_annotations: bool = False) -> list[str]:
    """The rule file, annotations removed unless kept (promtool compares all of an alert's annotations or none)."""
    data = yaml.safe_load(rules.read_text())
    for group in data["groups"]:
        for rule in group["rules"]:
            if not keep_annotations:
                rule.pop("annotations", None)
    path = out / rules.name
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    return [str(path)]


@pytest.mark.parametrize("alert", sorted(CASES))
def test_alert_rule(alert: str, rules: Path, tmp_path: Path) -> None:
    interval, series, checks = CASES[alert]
    promtool_test(unit_rules(rules, tmp_path), series, checks, tmp_path, "gpu-perf", interval=interval)


def test_the_straggler_alert_names_the_gpu_its_figure_and_the_health_code(rules: Path, tmp_path: Path) -> None:
    series = perf("clusterforge_gpu_gemm_tflops", H100, {("s1", 3): 600}, 700, ("s1", "s2"), 8)
    data = yaml.safe_load(rules.read_text())
    runbook = next(rule["annotations"]["runbook"] for group in data["groups"] for rule in group["rules"]
                   if rule.get("alert") == "GpuStraggler")
    annotations = {
        "summary": f"s1: GPU 3 is a straggler: gemm_tflops 600.0, more than 10 % below the median {H100}",
        "description": f"GPU 3 of s1 measured gemm_tflops 600.0 in the last perf run, more than 10 % below the median "
                       f"of the cluster's {H100} GPUs: every synchronous job step waits for it (health code gpu-slow).",
        "runbook": runbook}
    checks = [{"eval_time": "1m", "alertname": "GpuStraggler", "exp_alerts": [
        {"exp_labels": {**at("s1", gpu="3", name=H100, figure="gemm_tflops"), **WARN_PERSON},
         "exp_annotations": annotations}]}]
    promtool_test(unit_rules(rules, tmp_path, keep_annotations=True), series, checks, tmp_path, "gpu-perf")
