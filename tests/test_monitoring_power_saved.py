"""The monitoring role's scrape jobs for pools SLURM powers up and down, read by a real Prometheus (Debian's
package): the role's prometheus.yml, rendered by Ansible as in test_monitoring_rules, with the power-save programs'
file of powered-up nodes written by clusterforge.powersave.targets. The targets Prometheus derives carry the labels
a static target does (instance, node, the pool's zone and placement group, no pool label), the DCGM job takes only
the GPU pools' nodes, static targets are untouched, and a rewritten file adds and drops targets within seconds.

Skipped without prometheus and promtool (or failing under CLUSTERFORGE_REQUIRE_LAB=1), like test_monitoring_rules.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.powersave import targets
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.slurm import NodeState, parse_sinfo
from tests.test_monitoring_rules import Unsafe, promtool, render_role, run, tool

POOLS = {"gpu-el": {"gpu_count": 8, "gpu_vendor": Unsafe("nvidia"), "availability_zone": Unsafe("use1-az4"),
                    "placement_group": Unsafe("c1-gpu-el")},
         "burst": {"gpu_count": 0}}
CONFIG = PowerSaveConfig(cluster="c1", provider="lab", groups=(
    NodeGroup(name="gpu-el", nodes="gpu-el-[0001-0004]"),
    NodeGroup(name="burst", nodes="burst-[0001-0003]")))


class Sinfo:
    def __init__(self, text: str) -> None:
        self.text = text

    def nodes(self) -> dict[str, NodeState]:
        return parse_sinfo(self.text)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("elastic")
    return render_role(out, 8, [], {"monitoring_power_saved_pools": POOLS,
                                    "monitoring_power_saved_targets_file": str(out / "sd" / "powered-nodes.json")})


def config(rendered: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((rendered / "prometheus.yml").read_text())
    return loaded


def test_the_config_with_power_saved_pools_passes_promtool(rendered: Path) -> None:
    result = run([promtool(), "check", "config", str(rendered / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_both_exporter_jobs_read_the_programs_file_and_the_static_targets_stay(rendered: Path) -> None:
    jobs = {job["job_name"]: job for job in config(rendered)["scrape_configs"]}
    wanted = [{"files": [str(rendered / "sd" / "powered-nodes.json")]}]
    assert jobs["node"]["file_sd_configs"] == wanted and jobs["dcgm"]["file_sd_configs"] == wanted
    assert [g["targets"] for g in jobs["node"]["static_configs"]] == [
        ["cpu-0001:9100"], ["ctl-0001:9100"], ["gpu-0001:9100"], ["gpu-0002:9100"]]


def test_without_power_saved_pools_no_job_reads_a_file(tmp_path: Path) -> None:
    plain = render_role(tmp_path, 8, [])
    assert not [job for job in config(plain)["scrape_configs"] if "file_sd_configs" in job]


@pytest.fixture(scope="module")
def prometheus(rendered: Path) -> Iterator[str]:
    """Prometheus on a free local port with the rendered scrape jobs (no rules, no Alertmanager)."""
    binary = tool("prometheus", "prometheus")
    made = config(rendered)
    made.pop("rule_files")
    made.pop("alerting")
    made["global"]["scrape_interval"] = "1s"
    made["global"]["scrape_timeout"] = "1s"
    (rendered / "sd").mkdir(exist_ok=True)
    (rendered / "run.yml").write_text(yaml.safe_dump(made))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([binary, f"--config.file={rendered / 'run.yml'}",
                                f"--storage.tsdb.path={rendered / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def active(url: str) -> dict[tuple[str, str], dict[str, str]]:
    """(job, instance) -> labels of every active target."""
    with urllib.request.urlopen(f"{url}/api/v1/targets?state=active", timeout=5) as answer:
        data = json.load(answer)["data"]["activeTargets"]
    return {(t["labels"]["job"], t["labels"]["instance"]): {**t["labels"], "url": t["scrapeUrl"]} for t in data}


def wait_for(url: str, check: Any, timeout: float = 20) -> tuple[dict[tuple[str, str], dict[str, str]], float]:
    start = time.monotonic()
    while True:
        found = active(url)
        if check(found):
            return found, time.monotonic() - start
        assert time.monotonic() - start < timeout, sorted(found)
        time.sleep(0.2)


def elastic(found: dict[tuple[str, str], dict[str, str]]) -> set[tuple[str, str]]:
    return {key for key in found if key[1].startswith(("gpu-el-", "burst-"))}


def test_prometheus_scrapes_the_powered_up_nodes_labelled_like_static_ones_and_drops_them(
        rendered: Path, prometheus: str) -> None:
    path = rendered / "sd" / "powered-nodes.json"
    targets.refresh(CONFIG, Sinfo("gpu-el-0001|allocated|Unknown|none\ngpu-el-0002|idle~|Unknown|none\n"
                                  "gpu-el-0003|idle#|Unknown|none\nburst-0001|idle|Unknown|none\n"), path)
    found, took = wait_for(prometheus, lambda f: len(elastic(f)) == 3)
    assert elastic(found) == {("node", "gpu-el-0001"), ("dcgm", "gpu-el-0001"), ("node", "burst-0001")}
    assert found[("node", "gpu-el-0001")] == {
        "job": "node", "instance": "gpu-el-0001", "node": "gpu-el-0001", "zone": "use1-az4",
        "placement_group": "c1-gpu-el", "url": "http://gpu-el-0001:9100/metrics"}
    assert found[("dcgm", "gpu-el-0001")]["url"] == "http://gpu-el-0001:9400/metrics"
    assert found[("node", "burst-0001")] == {"job": "node", "instance": "burst-0001", "node": "burst-0001",
                                             "url": "http://burst-0001:9100/metrics"}
    # the static targets are as the role wrote them
    assert found[("node", "gpu-0001")] == {"job": "node", "instance": "gpu-0001", "node": "gpu-0001", "row": "a",
                                           "rack": "a01", "rack_position": "3", "url": "http://gpu-0001:9100/metrics"}
    assert ("dcgm", "gpu-0002") in found and ("dcgm", "cpu-0001") not in found
    # SLURM powers gpu-el-0001 down and burst-0001 up: the rewritten file is applied within seconds
    targets.refresh(CONFIG, Sinfo("gpu-el-0001|idle%|Unknown|none\nburst-0001|idle|Unknown|none\n"
                                  "burst-0002|mixed|Unknown|none\n"), path)
    found, took = wait_for(prometheus, lambda f: elastic(f) == {("node", "burst-0001"), ("node", "burst-0002")})
    assert took < 10, took
