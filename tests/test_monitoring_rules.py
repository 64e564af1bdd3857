"""The monitoring role's files, checked by the tools that read them: promtool (Debian's prometheus package) and
amtool (prometheus-alertmanager).

The role's templates are rendered by a real ansible-playbook run on this machine (connection local) from an
inventory like the one render writes, `!unsafe` values included, into a temporary directory. Then:
`promtool check config` on prometheus.yml (which checks the rule files too), `amtool check-config` on
alertmanager.yml, and `promtool test rules` unit tests with synthetic series: each alert fires on a bad series and
not on a good one, NodeDown after exactly its `for:`, GpuXidNeedsAction for Xid 79 and not 13. The unit tests run
on the rendered rules without their annotations (promtool compares annotations too; they are checked here
separately). The Grafana dashboards' expressions go through promtool as recording rules.

Without promtool or amtool these tests are skipped with the reason, or fail when CLUSTERFORGE_REQUIRE_LAB=1;
scripts/test installs both as root (apt, the daemons not started).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

ROLE = ROOT / "roles" / "monitoring"
TELEMETRY = ROOT / "roles" / "telemetry"
BIN = Path(sys.executable).parent
REQUIRE = os.environ.get("CLUSTERFORGE_REQUIRE_LAB") == "1"
ALERTS = ["NodeDown", "NodeHealthCheckFailing", "NodeHealthCheckStale", "LustreNotMounted", "GpuXidNeedsAction",
          "GpuEccUncorrectable", "GpuRowRemapPending", "GpuRowRemapFailure", "GpuNvlinkErrors", "GpuMissing",
          "GpuHot", "DcgmExporterDown", "InfinibandPortDown", "InfinibandPortDegraded", "NodeDrained",
          "SlurmNodeDown", "SlurmctldDown", "SlurmdbdDown", "SlurmBackupControllerInControl", "SlurmMetricsStale",
          "NodeRemediationGaveUp", "NodeRebootedByRemediation", "RackPowerOverBudget", "FeedPowerOverBudget",
          "InletOverLimit", "BmcReadFailing", "InfinibandPortErrorsClimbing", "GpuHardwareSlowdown",
          "GpuPcieLinkDegraded", "GpuStraggler", "GpuWrongAnswer"]
# Alerts whose promtool tests are a module of their own (the module checks that it tests them).
TESTED_ELSEWHERE = {"InfinibandPortErrorsClimbing": "test_monitoring_fabric_errors.py",
                    **dict.fromkeys(["GpuHardwareSlowdown", "GpuPcieLinkDegraded", "GpuStraggler", "GpuWrongAnswer"],
                                    "test_monitoring_gpu_speed.py")}
# A webhook as the blueprint may carry it: Jinja that must reach the file as text, and YAML-significant characters.
HOSTILE_WEBHOOK = "https://hooks.example.org/alert?token=a'b:c#d&x={{7*7}}"


def tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (Debian's {package} package; scripts/test installs it as root)"
        if REQUIRE:
            pytest.fail(message + "; CLUSTERFORGE_REQUIRE_LAB=1 requires it")
        pytest.skip(message)
    return path


def promtool() -> str:
    return tool("promtool", "prometheus")


def amtool() -> str:
    return tool("amtool", "prometheus-alertmanager")


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120, **kwargs)


def promtool_test(files: list[str], series: dict[str, str], checks: list[dict[str, Any]], out: Path, name: str,
                  interval: str = "1m", evaluation_interval: str = "1m") -> None:
    """`promtool test rules` on FILES: one test of SERIES (name: values) and its alert CHECKS, written to
    OUT/NAME.test.yml; fails with promtool's own words."""
    tests = {"rule_files": files, "evaluation_interval": evaluation_interval, "tests": [{
        "interval": interval, "input_series": [{"series": k, "values": v} for k, v in series.items()],
        "alert_rule_test": checks}]}
    path = out / f"{name}.test.yml"
    path.write_text(yaml.safe_dump(tests, sort_keys=False, width=1000))
    result = run([promtool(), "test", "rules", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr


# --- rendering the role's templates with Ansible ----------------------------------------------------------------

class Unsafe(str):
    """A string render writes `!unsafe` (data, never a template)."""


class InventoryDumper(yaml.SafeDumper):
    """Writes Unsafe strings with render's `!unsafe` tag."""


InventoryDumper.add_representer(Unsafe, lambda dumper, value: dumper.represent_scalar("!unsafe", str(value)))

GPU_CLUSTER: dict[str, dict[str, dict[str, Any]]] = {
    "slurm_controller": {"ctl-0001": {}},
    # where render places each host: rack, row and lowest U on-prem
    "pool_gpu": {"gpu-0001": {"rack": Unsafe("a01"), "row": Unsafe("a"), "rack_position": 3},
                 "gpu-0002": {"rack": Unsafe("a02"), "row": Unsafe("a"), "rack_position": 3}},
    "pool_cpu": {"cpu-0001": {}},
}


def inventory(cluster: dict[str, dict[str, dict[str, Any]]], gpus: int) -> dict[str, Any]:
    children: dict[str, Any] = {group: {"hosts": hosts} for group, hosts in cluster.items()}
    children["pool_gpu"]["vars"] = {"gpu_count": gpus, "gpu_model": Unsafe("H100-SXM5")}
    children["pool_cpu"]["vars"] = {"gpu_count": 0, "availability_zone": Unsafe("use1-az4"),  # a cloud pool's
                                    "placement_group": Unsafe("c-cpu")}
    # a pool SLURM powers up and down (as the lab's nodes.yml places its nodes): never a scrape target
    children["pool_burst"] = {"hosts": {"burst-0001": {}}, "vars": {"gpu_count": 8, "power_saved": True}}
    children["slurm_compute"] = {"children": {"pool_gpu": {}, "pool_cpu": {}, "pool_burst": {}}}
    return {"all": {"children": children}}


def render_role(out: Path, gpus: int, webhooks: list[str], extra: dict[str, Any] | None = None) -> Path:
    """The role's templates rendered for a cluster (ctl-0001, two GPU nodes with `gpus` GPUs each, a CPU node) into
    `out`: prometheus.yml, alertmanager.yml and rules/clusterforge-*.yml; `extra`: more rendered vars."""
    inv = out / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    (out / "rules").mkdir()
    (inv / "hosts.yml").write_text(yaml.dump(inventory(GPU_CLUSTER, gpus), Dumper=InventoryDumper, sort_keys=False))
    # the role's defaults and vars, then what render writes (strings `!unsafe`), all at inventory precedence
    values = {**yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()),
              **yaml.safe_load((ROLE / "vars" / "main.yml").read_text()),
              "monitoring_enabled": True, "monitoring_host": Unsafe("ctl-0001"),
              "monitoring_alert_webhooks": [Unsafe(url) for url in webhooks],
              "monitoring_rules_dir": str(out / "rules"), "slurm_controller_host": Unsafe("ctl-0001"),
              **({"aws_region": Unsafe("us-east-1")} if gpus else {}), **(extra or {})}
    (inv / "group_vars" / "all.yml").write_text(yaml.dump(values, Dumper=InventoryDumper, sort_keys=False, width=1000))
    templates = ROLE / "templates"
    rules = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["monitoring_rule_files"]
    tasks = [{"name": "prometheus.yml", "ansible.builtin.template": {
                 "src": str(templates / "prometheus.yml.j2"), "dest": str(out / "prometheus.yml"), "mode": "0644"}},
             {"name": "alertmanager.yml", "ansible.builtin.template": {
                 "src": str(templates / "alertmanager.yml.j2"), "dest": str(out / "alertmanager.yml"),
                 "mode": "0644"}}]
    tasks += [{"name": f"rules {name}", "ansible.builtin.template": {
                  "src": str(templates / f"alerts-{name}.yml.j2"),
                  "dest": str(out / "rules" / f"clusterforge-{name}.yml"), "mode": "0644"}} for name in rules]
    playbook = [{"hosts": "ctl-0001", "gather_facts": False, "tasks": tasks}]
    (out / "render.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
    home = out / "ansible-home"
    env = {**os.environ, "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
           "ANSIBLE_REMOTE_TEMP": str(home / "remote"), "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
           "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(home / "facts"), "ANSIBLE_NOCOLOR": "1"}
    extra = json.dumps({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                        "ansible_become": False})
    result = run([str(BIN / "ansible-playbook"), "-i", str(inv / "hosts.yml"), str(out / "render.yml"), "-e", extra],
                 env=env, cwd=out)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return out


# The gate's budgets as render writes them (rack -> W, its feeds' W) and the site's inlet limit.
POWER_PLAN = {"monitoring_power_budgets": {
                  Unsafe("a01"): {"watts": 20000, "feeds": {Unsafe("a01-a"): 17000, Unsafe("a01-b"): 17000}},
                  Unsafe("a02"): {"watts": 20000, "feeds": {Unsafe("a02-a"): 17000, Unsafe("a02-b"): 17000}}},
              "monitoring_inlet_limit_celsius": 27.0}


@pytest.fixture(scope="module")
def gpu_cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GPU nodes, two webhooks (one hostile), power budgets for racks a01 and a02."""
    return render_role(tmp_path_factory.mktemp("gpu"), 8, ["https://alerts.example.org/hook", HOSTILE_WEBHOOK],
                       POWER_PLAN)


@pytest.fixture(scope="module")
def cpu_cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """No GPUs, no webhook."""
    return render_role(tmp_path_factory.mktemp("cpu"), 0, [])


# --- prometheus.yml and alertmanager.yml -------------------------------------------------------------------------

def test_prometheus_config_passes_promtool(gpu_cluster: Path) -> None:
    result = run([promtool(), "check", "config", str(gpu_cluster / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr
    # the rule files named in rule_files were found and checked with it
    assert result.stdout.count("SUCCESS") >= 5, result.stdout


def test_prometheus_scrapes_every_host_but_power_saved_ones_and_the_gpu_hosts_dcgm_exporter(gpu_cluster: Path) -> None:
    config = yaml.safe_load((gpu_cluster / "prometheus.yml").read_text())
    assert config["global"] == {"scrape_interval": "15s", "evaluation_interval": "3s", "scrape_timeout": "5s",
                                "external_labels": {"region": "us-east-1"}}
    assert config["rule_files"] == [str(gpu_cluster / "rules") + "/*.yml"]
    assert config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["localhost:9093"]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert list(jobs) == ["prometheus", "node", "dcgm"]
    assert jobs["prometheus"]["static_configs"] == [{"targets": ["localhost:9090"]}]
    hosts = ["cpu-0001", "ctl-0001", "gpu-0001", "gpu-0002"]
    assert jobs["node"]["honor_labels"] is True
    where = {"cpu-0001": {"zone": "use1-az4", "placement_group": "c-cpu"}, "ctl-0001": {},
             "gpu-0001": {"row": "a", "rack": "a01", "rack_position": "3"},
             "gpu-0002": {"row": "a", "rack": "a02", "rack_position": "3"}}
    assert jobs["node"]["static_configs"] == [
        {"targets": [f"{h}:9100"], "labels": {"instance": h, "node": h, **where[h]}} for h in hosts]
    assert jobs["dcgm"]["static_configs"] == [
        {"targets": [f"{h}:9400"], "labels": {"instance": h, "node": h, **where[h]}} for h in ("gpu-0001", "gpu-0002")]


def test_no_dcgm_job_without_nvidia_gpus(cpu_cluster: Path) -> None:
    result = run([promtool(), "check", "config", str(cpu_cluster / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load((cpu_cluster / "prometheus.yml").read_text())
    assert [job["job_name"] for job in config["scrape_configs"]] == ["prometheus", "node"]


def test_alertmanager_config_passes_amtool_with_the_webhooks_as_data(gpu_cluster: Path) -> None:
    path = gpu_cluster / "alertmanager.yml"
    result = run([amtool(), "check-config", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(path.read_text())
    assert config["route"]["receiver"] == "clusterforge"
    assert config["route"]["group_by"] == ["alertname", "instance"]
    assert config["receivers"] == [{"name": "clusterforge", "webhook_configs": [
        {"url": "https://alerts.example.org/hook", "send_resolved": True},
        {"url": HOSTILE_WEBHOOK, "send_resolved": True}]}]


def test_alertmanager_config_without_webhooks_has_a_receiver_without_configs(cpu_cluster: Path) -> None:
    path = cpu_cluster / "alertmanager.yml"
    result = run([amtool(), "check-config", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert yaml.safe_load(path.read_text())["receivers"] == [{"name": "clusterforge"}]


# --- the rules themselves ----------------------------------------------------------------------------------------

def rules_of(rendered: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((rendered / "rules").glob("*.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                if "record" in rule:   # the plan's budgets, recorded as series (alerts-power)
                    continue
                assert rule["alert"] not in found, f"{rule['alert']} is defined twice"
                found[rule["alert"]] = rule
    return found


def test_rule_files_pass_promtool(gpu_cluster: Path) -> None:
    files = sorted(str(p) for p in (gpu_cluster / "rules").glob("*.yml"))
    result = run([promtool(), "check", "rules", *files])
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_is_listed_labelled_and_has_a_runbook(gpu_cluster: Path) -> None:
    rules = rules_of(gpu_cluster)
    assert sorted(rules) == sorted(ALERTS)
    readme = (ROLE / "README.md").read_text()
    for name, rule in rules.items():
        assert f"| `{name}` |" in readme, f"{name} is not in the role's README"
        labels, notes = rule.get("labels") or {}, rule.get("annotations") or {}
        assert labels.get("severity") in ("critical", "warning", "info"), name
        # NodeHealthCheckFailing takes its action from the failing check (clusterforge_health_failure{action})
        assert labels.get("action") in ("reboot", "person", "none") or name == "NodeHealthCheckFailing", name
        assert notes.get("summary") and notes.get("runbook"), f"{name} needs a summary and a runbook"
        assert "\n" not in notes["runbook"], f"{name}: the runbook is one line"


# --- promtool test rules -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def unit_rules(gpu_cluster: Path) -> list[str]:
    """The rendered rule files without annotations, for promtool's unit tests."""
    out = gpu_cluster / "unit-rules"
    out.mkdir()
    files = []
    for path in sorted((gpu_cluster / "rules").glob("*.yml")):
        data = yaml.safe_load(path.read_text())
        for group in data["groups"]:
            for rule in group["rules"]:
                rule.pop("annotations", None)
        (out / path.name).write_text(yaml.safe_dump(data, sort_keys=False))
        files.append(str(out / path.name))
    return files


def node(host: str, job: str = "node") -> str:
    return f'instance="{host}",job="{job}",node="{host}"'


def fired(alert: str, eval_time: str, *labels: dict[str, str]) -> dict[str, Any]:
    return {"eval_time": eval_time, "alertname": alert, "exp_alerts": [{"exp_labels": dict(item)} for item in labels]}


def at(host: str, **extra: str) -> dict[str, str]:
    return {"instance": host, "node": host, **extra}


def severity(level: str, action: str) -> dict[str, str]:
    return {"severity": level, "action": action}


CRIT_PERSON, WARN_PERSON = severity("critical", "person"), severity("warning", "person")
CRIT_REBOOT, WARN_REBOOT = severity("critical", "reboot"), severity("warning", "reboot")

# alert -> (series interval, {series: values}, [checks]); every case has a bad series that fires and a good one that
# does not (the good ones' absence from exp_alerts is what promtool checks).
CASES: dict[str, tuple[str, dict[str, str], list[dict[str, Any]]]] = {
    "NodeDown": ("15s", {
        f"up{{{node('n1')}}}": "1 1 0 0 0 0 0 0 0 0",   # scrapes fail from 30 s on
        f"up{{{node('n2')}}}": "1x10",
    }, [fired("NodeDown", "75s"),                    # 45 s down: still pending
        fired("NodeDown", "90s", {**at("n1", job="node"), **CRIT_PERSON})]),   # 60 s down: `for: 60s` is over
    "GpuXidNeedsAction": ("15s", {
        f'DCGM_FI_DEV_XID_ERRORS{{{node("g1", "dcgm")},gpu="0"}}': "0 79 79 79",
        f'DCGM_EXP_XID_ERRORS_COUNT{{{node("g1", "dcgm")},gpu="0",xid="79"}}': "0 1 1 1",
        f'DCGM_FI_DEV_XID_ERRORS{{{node("g2", "dcgm")},gpu="3"}}': "0 13 13 13",       # application fault
        f'DCGM_EXP_XID_ERRORS_COUNT{{{node("g2", "dcgm")},gpu="3",xid="13"}}': "0 4 4 4",
        # a 48 counted in the window, though a later 13 is the last Xid
        f'DCGM_FI_DEV_XID_ERRORS{{{node("g3", "dcgm")},gpu="1"}}': "0 48 13 13",
        f'DCGM_EXP_XID_ERRORS_COUNT{{{node("g3", "dcgm")},gpu="1",xid="48"}}': "0 1 1 1",
        f'clusterforge_health_failure{{{node("g4")},code="gpu-xid",action="reboot"}}': "1 1 1 1",
        f'clusterforge_health_failure{{{node("g5")},code="disk",action="person"}}': "1 1 1 1",
    }, [fired("GpuXidNeedsAction", "0s", {**at("g4"), **CRIT_REBOOT}),
        fired("GpuXidNeedsAction", "30s", {**at("g1", gpu="0", xid="79"), **CRIT_REBOOT},
              {**at("g3", gpu="1", xid="48"), **CRIT_REBOOT}, {**at("g4"), **CRIT_REBOOT})]),
    "GpuEccUncorrectable": ("15s", {
        f'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{node("g1", "dcgm")},gpu="2"}}': "0 0 1 1",
        f'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{node("g1", "dcgm")},gpu="3"}}': "0 0 0 0",
        f'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{{{node("g1", "dcgm")},gpu="3"}}': "0 5 9 20",   # correctable: no alert
    }, [fired("GpuEccUncorrectable", "15s"),
        fired("GpuEccUncorrectable", "30s", {**at("g1", gpu="2"), **CRIT_REBOOT})]),
    "GpuRowRemapPending": ("15s", {
        f'DCGM_FI_DEV_ROW_REMAP_PENDING{{{node("g1", "dcgm")},gpu="0"}}': "1 1",
        f'DCGM_FI_DEV_ROW_REMAP_PENDING{{{node("g1", "dcgm")},gpu="1"}}': "0 0",
        f'clusterforge_health_failure{{{node("g2")},code="gpu-remap",action="reboot"}}': "1 1",
        f'clusterforge_health_failure{{{node("g3")},code="gpu-remap",action="person"}}': "1 1",
    }, [fired("GpuRowRemapPending", "15s", {**at("g1", gpu="0"), **WARN_REBOOT}, {**at("g2"), **WARN_REBOOT})]),
    "GpuRowRemapFailure": ("15s", {
        f'DCGM_FI_DEV_ROW_REMAP_FAILURE{{{node("g1", "dcgm")},gpu="5"}}': "0 1",
        f'DCGM_FI_DEV_ROW_REMAP_FAILURE{{{node("g1", "dcgm")},gpu="6"}}': "0 0",
        f'clusterforge_health_failure{{{node("g3")},code="gpu-remap",action="person"}}': "1 1",
    }, [fired("GpuRowRemapFailure", "15s", {**at("g1", gpu="5"), **CRIT_PERSON}, {**at("g3"), **CRIT_PERSON})]),
    "GpuNvlinkErrors": ("1m", {
        f'DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL{{{node("g1", "dcgm")},gpu="0"}}': "0 0 0 5 5",
        f'DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{{{node("g1", "dcgm")},gpu="0"}}': "2x4",
        f'DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL{{{node("g1", "dcgm")},gpu="1"}}': "7x4",   # old errors
        f'clusterforge_health_failure{{{node("g2")},code="nvlink",action="reboot"}}': "1x4",   # not this alert
    }, [fired("GpuNvlinkErrors", "2m"), fired("GpuNvlinkErrors", "4m", {**at("g1", gpu="0"), **WARN_PERSON})]),
    "GpuMissing": ("30s", {
        **{f'DCGM_FI_DEV_GPU_TEMP{{{node("g1", "dcgm")},gpu="{i}"}}': "60x10" for i in range(7)},   # 7 of 8
        **{f'DCGM_FI_DEV_GPU_TEMP{{{node("g2", "dcgm")},gpu="{i}"}}': "60x10" for i in range(8)},
        f'up{{{node("g3", "dcgm")}}}': "1x10",                  # the exporter runs and exports no GPU
        f'up{{{node("g4", "dcgm")}}}': "0x10",                  # the exporter is down: DcgmExporterDown's
        **{f'clusterforge_expected_gpus{{{node(h)}}}': "8x10" for h in ("g1", "g2", "g3", "g4")},
        f'clusterforge_expected_gpus{{{node("c1")}}}': "0x10",
        f'clusterforge_health_failure{{{node("g5")},code="gpu-missing",action="reboot"}}': "1x10",
        f'clusterforge_health_failure{{{node("g6")},code="gpu-missing",action="person"}}': "1x10",   # wrong model
    }, [fired("GpuMissing", "1m"),
        fired("GpuMissing", "2m", {**at("g1"), **CRIT_REBOOT}, {**at("g3"), **CRIT_REBOOT},
              {**at("g5"), **CRIT_REBOOT})]),
    "GpuHot": ("1m", {
        f'DCGM_FI_DEV_GPU_TEMP{{{node("g1", "dcgm")},gpu="0"}}': "90x10",
        f'DCGM_FI_DEV_GPU_TEMP{{{node("g1", "dcgm")},gpu="1"}}': "80x10",
    }, [fired("GpuHot", "4m"), fired("GpuHot", "5m", {**at("g1", gpu="0"), **WARN_PERSON})]),
    "DcgmExporterDown": ("30s", {
        f'up{{{node("g1", "dcgm")}}}': "0x10",
        f'up{{{node("g2", "dcgm")}}}': "1x10",
        f'up{{{node("g3")}}}': "0x10",                          # a node exporter: NodeDown's
    }, [fired("DcgmExporterDown", "1m"),
        fired("DcgmExporterDown", "2m", {**at("g1", job="dcgm"), **WARN_PERSON})]),
    "InfinibandPortDown": ("30s", {
        # i1: 2 ports expected, mlx5_1 goes down at 1 m
        f'clusterforge_expected_infiniband_ports{{{node("i1")}}}': "2x20",
        f'node_infiniband_state_id{{{node("i1")},device="mlx5_0",port="1"}}': "4x20",
        f'node_infiniband_state_id{{{node("i1")},device="mlx5_1",port="1"}}': "4 4 1x18",
        # i2: 1 port expected and Active; an uncabled second port that never came up is not an alert
        f'clusterforge_expected_infiniband_ports{{{node("i2")}}}': "1x20",
        f'node_infiniband_state_id{{{node("i2")},device="mlx5_0",port="1"}}': "4x20",
        f'node_infiniband_state_id{{{node("i2")},device="mlx5_1",port="1"}}': "1x20",
        # i3: 4 ports expected, the collector exports none
        f'clusterforge_expected_infiniband_ports{{{node("i3")}}}': "4x20",
        # c1: none expected (a container, or no fabric), none exported
        f'clusterforge_expected_infiniband_ports{{{node("c1")}}}': "0x20",
    }, [fired("InfinibandPortDown", "90s"),
        fired("InfinibandPortDown", "2m", {**at("i3"), **CRIT_PERSON}),
        fired("InfinibandPortDown", "4m", {**at("i1"), **CRIT_PERSON},
              {**at("i1", device="mlx5_1", port="1"), **CRIT_PERSON}, {**at("i3"), **CRIT_PERSON})]),
    "InfinibandPortDegraded": ("1m", {
        # d1: 2 ports at 400 Gb/s expected, one trained at 200
        f'clusterforge_expected_infiniband_ports{{{node("d1")}}}': "2x10",
        f'clusterforge_expected_infiniband_rate_bytes_per_second{{{node("d1")}}}': "5e10x10",
        f'node_infiniband_rate_bytes_per_second{{{node("d1")},device="mlx5_0",port="1"}}': "5e10x10",
        f'node_infiniband_rate_bytes_per_second{{{node("d1")},device="mlx5_1",port="1"}}': "2.5e10x10",
        **{f'node_infiniband_state_id{{{node(h)},device="mlx5_{i}",port="1"}}': "4x10" for h in ("d1", "d2", "d3")
           for i in (0, 1)},
        # d2: both at the expected rate
        f'clusterforge_expected_infiniband_ports{{{node("d2")}}}': "2x10",
        f'clusterforge_expected_infiniband_rate_bytes_per_second{{{node("d2")}}}': "5e10x10",
        **{f'node_infiniband_rate_bytes_per_second{{{node("d2")},device="mlx5_{i}",port="1"}}': "5e10x10"
           for i in (0, 1)},
        # d3: no rate known; mlx5_1 retrained from 400 to 200 Gb/s at 2 m
        f'clusterforge_expected_infiniband_ports{{{node("d3")}}}': "2x10",
        f'clusterforge_expected_infiniband_rate_bytes_per_second{{{node("d3")}}}': "0x10",
        f'node_infiniband_rate_bytes_per_second{{{node("d3")},device="mlx5_0",port="1"}}': "5e10x10",
        f'node_infiniband_rate_bytes_per_second{{{node("d3")},device="mlx5_1",port="1"}}': "5e10 5e10 2.5e10x8",
    }, [fired("InfinibandPortDegraded", "4m"),
        fired("InfinibandPortDegraded", "5m", {**at("d1"), **WARN_PERSON}),
        fired("InfinibandPortDegraded", "7m", {**at("d1"), **WARN_PERSON},
              {**at("d3", device="mlx5_1", port="1"), **WARN_PERSON})]),
    "NodeDrained": ("15s", {
        # written by both controllers, with a reason that needs escaping
        'slurm_node_drained{instance="c1",job="node",node="n1",reason="bad \\"disk\\" at C:\\\\x"}': "1x8",
        'slurm_node_drained{instance="c2",job="node",node="n1",reason="bad \\"disk\\" at C:\\\\x"}': "1x8",
        'slurm_node_state{instance="c1",job="node",node="n2",state="idle"}': "1x8",
    }, [fired("NodeDrained", "45s"),
        fired("NodeDrained", "60s", {"node": "n1", "reason": 'bad "disk" at C:\\x', **WARN_PERSON})]),
    "SlurmNodeDown": ("30s", {
        'slurm_node_down{instance="c1",job="node",node="n3",reason="Not responding"}': "1x8",
    }, [fired("SlurmNodeDown", "1m"),
        fired("SlurmNodeDown", "2m", {"node": "n3", "reason": "Not responding", **WARN_PERSON})]),
    "SlurmctldDown": ("15s", {
        f'node_systemd_unit_state{{{node("c1")},name="slurmctld.service",state="active",type="simple"}}': "1 1 0x8",
        f'clusterforge_expected_unit{{{node("c1")},name="slurmctld.service"}}': "1x10",
        # installed but not meant to run on a compute node: not an alert
        f'node_systemd_unit_state{{{node("n1")},name="slurmctld.service",state="active",type="simple"}}': "0x10",
        f'clusterforge_expected_unit{{{node("n1")},name="slurmd.service"}}': "1x10",
        # the backup controller does not answer scontrol ping
        'slurm_controller_up{instance="c1",job="node",node="c1",host="c2",role="backup"}': "0x10",
        'slurm_controller_up{instance="c1",job="node",node="c1",host="c1",role="primary"}': "1x10",
    }, [fired("SlurmctldDown", "60s", {"host": "c2", "role": "backup", **CRIT_PERSON}),
        fired("SlurmctldDown", "90s", {"host": "c2", "role": "backup", **CRIT_PERSON},
              {**at("c1", job="node", name="slurmctld.service", state="active", type="simple"), **CRIT_PERSON})]),
    "SlurmdbdDown": ("30s", {
        f'node_systemd_unit_state{{{node("c1")},name="slurmdbd.service",state="active",type="simple"}}': "0x8",
        f'clusterforge_expected_unit{{{node("c1")},name="slurmdbd.service"}}': "1x8",
        'slurm_dbd_up{instance="c1",job="node",node="c1"}': "1 1 0x6",
        'slurm_dbd_up{instance="c2",job="node",node="c2"}': "1 1 0x6",
    }, [fired("SlurmdbdDown", "2m", {**at("c1", job="node", name="slurmdbd.service", state="active",
                                            type="simple"), **WARN_PERSON}),
        fired("SlurmdbdDown", "3m", {**at("c1", job="node", name="slurmdbd.service", state="active",
                                            type="simple"), **WARN_PERSON}, WARN_PERSON)]),
    "SlurmBackupControllerInControl": ("30s", {
        'slurm_controller_in_control{instance="c2",job="node",node="c2",host="c1",role="primary"}': "1 1 0x6",
        'slurm_controller_in_control{instance="c2",job="node",node="c2",host="c2",role="backup"}': "0 0 1x6",
    }, [fired("SlurmBackupControllerInControl", "60s"),
        fired("SlurmBackupControllerInControl", "2m", {"host": "c2", "role": "backup", **WARN_PERSON})]),
    "SlurmMetricsStale": ("15s", {
        f'clusterforge_slurm_metrics_last_run_timestamp_seconds{{{node("c1")}}}': "0+15x40",   # runs every 15 s
        f'clusterforge_slurm_metrics_last_run_timestamp_seconds{{{node("c2")}}}': "0x40",      # stopped at 0
        f'clusterforge_expected_unit{{{node("c3")},name="slurmctld.service"}}': "1x40",         # never ran
        f'clusterforge_expected_unit{{{node("c1")},name="slurmctld.service"}}': "1x40",
    }, [fired("SlurmMetricsStale", "2m", {**at("c3"), **WARN_PERSON}),
        fired("SlurmMetricsStale", "5m", {**at("c2"), **WARN_PERSON}, {**at("c3"), **WARN_PERSON})]),
    "NodeHealthCheckFailing": ("1m", {
        f'clusterforge_health_ok{{{node("n1")}}}': "0x5",
        f'clusterforge_health_failure{{{node("n1")},code="disk",action="person"}}': "1x5",
        f'clusterforge_health_failure{{{node("n1")},code="nccl",action="reboot"}}': "1x5",
        # failures with their own alert are left to them
        f'clusterforge_health_ok{{{node("n2")}}}': "0x5",
        f'clusterforge_health_failure{{{node("n2")},code="gpu-xid",action="reboot"}}': "1x5",
        f'clusterforge_health_failure{{{node("n2")},code="gpu-missing",action="reboot"}}': "1x5",
        # ... but not a wrong GPU model (gpu-missing, person) nor an inactive NVLink
        f'clusterforge_health_ok{{{node("n5")}}}': "0x5",
        f'clusterforge_health_failure{{{node("n5")},code="gpu-missing",action="person"}}': "1x5",
        f'clusterforge_health_failure{{{node("n5")},code="nvlink",action="reboot"}}': "1x5",
        # failing without a failure series
        f'clusterforge_health_ok{{{node("n3")}}}': "0x5",
        f'clusterforge_health_ok{{{node("n4")}}}': "1x5",
    }, [fired("NodeHealthCheckFailing", "1m",
              {**at("n1", code="disk", action="person"), "severity": "warning"},
              {**at("n1", code="nccl", action="reboot"), "severity": "warning"},
              {**at("n3", action="person"), "severity": "warning"},
              {**at("n5", code="gpu-missing", action="person"), "severity": "warning"},
              {**at("n5", code="nvlink", action="reboot"), "severity": "warning"})]),
    "NodeHealthCheckStale": ("5m", {
        f'clusterforge_health_last_run_timestamp_seconds{{{node("n1")}}}': "0x10",         # ran once, at 0
        f'clusterforge_health_last_run_timestamp_seconds{{{node("n2")}}}': "0+300x10",     # every 300 s
    }, [fired("NodeHealthCheckStale", "20m"),
        fired("NodeHealthCheckStale", "30m", {**at("n1", job="node"), **WARN_PERSON})]),
    "LustreNotMounted": ("1m", {
        f'clusterforge_health_failure{{{node("n1")},code="lustre-mount",action="reboot"}}': "1x3",
        f'clusterforge_health_failure{{{node("n2")},code="shared-mount",action="person"}}': "1x3",
    }, [fired("LustreNotMounted", "1m", {**at("n1"), **CRIT_REBOOT})]),
    "NodeRemediationGaveUp": ("1m", {
        'clusterforge_remediation_gave_up{instance="c1",job="node",node="n5"}': "1x3",
        'clusterforge_remediation_gave_up{instance="c1",job="node",node="n6"}': "0x3",
    }, [fired("NodeRemediationGaveUp", "1m", {"node": "n5", **CRIT_PERSON})]),
    "NodeRebootedByRemediation": ("5m", {
        'clusterforge_remediation_reboots_total{instance="c1",job="node",node="n5"}': "0 0 1x10",
        'clusterforge_remediation_reboots_total{instance="c1",job="node",node="n6"}': "3x12",   # long ago
    }, [fired("NodeRebootedByRemediation", "5m"),
        fired("NodeRebootedByRemediation", "15m", {"node": "n5", "severity": "info", "action": "none"})]),
    # each node's draw split over its rack's two feeds (roles/telemetry); budgets: POWER_PLAN
    "RackPowerOverBudget": ("1m", {
        **{f'clusterforge_bmc_power_watts{{{node(n)},rack="a01",feed="a01-{f}"}}': "5500x10"
           for n in ("n1", "n2") for f in "ab"},                          # 22,000 W over 20,000
        **{f'clusterforge_bmc_power_watts{{{node(n)},rack="a02",feed="a02-{f}"}}': "5000x10"
           for n in ("n3", "n4") for f in "ab"},                          # exactly 20,000 W: not over
    }, [fired("RackPowerOverBudget", "4m"),                               # `for: 300s`: still pending
        fired("RackPowerOverBudget", "6m", {"rack": "a01", **CRIT_PERSON})]),
    "FeedPowerOverBudget": ("1m", {
        **{f'clusterforge_bmc_power_watts{{{node(n)},rack="a01",feed="a01-{f}"}}': "9000x10"
           for n in ("n1", "n2") for f in "ab"},                          # 18,000 W a feed, over 17,000
        **{f'clusterforge_bmc_power_watts{{{node(n)},rack="a02",feed="a02-{f}"}}': "8500x10"
           for n in ("n3", "n4") for f in "ab"},                          # exactly 17,000 W a feed
    }, [fired("FeedPowerOverBudget", "4m"),
        fired("FeedPowerOverBudget", "6m", {"rack": "a01", "feed": "a01-a", **CRIT_PERSON},
              {"rack": "a01", "feed": "a01-b", **CRIT_PERSON})]),
    "InletOverLimit": ("1m", {
        f'clusterforge_bmc_inlet_celsius{{{node("n1")},rack="a01"}}': "27.5x10",
        f'clusterforge_bmc_inlet_celsius{{{node("n2")},rack="a01"}}': "27x10",   # at the limit: not over
    }, [fired("InletOverLimit", "4m"), fired("InletOverLimit", "6m", {**at("n1", rack="a01"), **CRIT_PERSON})]),
    "BmcReadFailing": ("1m", {
        f'clusterforge_bmc_read_ok{{{node("n1")},rack="a01",reason="auth"}}': "0x25",
        f'clusterforge_bmc_last_read_timestamp_seconds{{{node("n1")}}}': "0+60x25",
        f'clusterforge_bmc_read_ok{{{node("n2")},rack="a01"}}': "1x25",
        f'clusterforge_bmc_last_read_timestamp_seconds{{{node("n2")}}}': "0+60x25",
        f'clusterforge_bmc_read_ok{{{node("n3")},rack="a02"}}': "1x25",
        f'clusterforge_bmc_last_read_timestamp_seconds{{{node("n3")}}}': "0x25",   # its timer stopped at 0
    }, [fired("BmcReadFailing", "9m"),
        fired("BmcReadFailing", "11m", {**at("n1", rack="a01", reason="auth"), **WARN_PERSON}),
        fired("BmcReadFailing", "21m", {**at("n1", rack="a01", reason="auth"), **WARN_PERSON},
              {**at("n3", reason="stale"), **WARN_PERSON})]),
}


def test_every_alert_has_a_unit_test() -> None:
    assert sorted([*CASES, *TESTED_ELSEWHERE]) == sorted(ALERTS)


@pytest.mark.parametrize("alert", sorted(CASES))
def test_alert_rule(alert: str, unit_rules: list[str], tmp_path: Path) -> None:
    interval, series, checks = CASES[alert]
    promtool_test(unit_rules, series, checks, tmp_path, alert, interval=interval, evaluation_interval="15s")


# --- what the rules and dashboards read exists -------------------------------------------------------------------

def dcgm_counters() -> set[str]:
    """The DCGM fields the telemetry role's counters file enables."""
    lines = (TELEMETRY / "files" / "dcgm-counters.csv").read_text().splitlines()
    return {line.split(",")[0].strip() for line in lines if line.strip() and not line.startswith("#")}


def test_dcgm_counters_enable_what_a_training_fleet_needs() -> None:
    required = {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
                "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_POWER_VIOLATION",
                "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_RELIABILITY_VIOLATION", "DCGM_EXP_XID_ERRORS_COUNT",
                # the exporter's defaults the rules and dashboards read
                "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"}
    assert required <= dcgm_counters(), sorted(required - dcgm_counters())
    for line in (TELEMETRY / "files" / "dcgm-counters.csv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            field, kind, text = (part.strip() for part in line.split(",", 2))
            assert re.fullmatch(r"DCGM_(FI|EXP)_[A-Z0-9_]+", field) and kind in ("gauge", "counter", "label"), line
            assert text, line


DCGM_NAME = re.compile(r"\bDCGM_(?:FI|EXP)_[A-Z0-9_]+")


def test_rules_read_only_dcgm_fields_the_exporter_is_told_to_export(gpu_cluster: Path) -> None:
    text = "".join(p.read_text() for p in (gpu_cluster / "rules").glob("*.yml"))
    assert set(DCGM_NAME.findall(text)) <= dcgm_counters(), sorted(set(DCGM_NAME.findall(text)) - dcgm_counters())


# --- Grafana dashboards ------------------------------------------------------------------------------------------

DASHBOARDS = sorted((ROLE / "files" / "grafana").glob("*.json"))


def panels_of(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out += panel.get("panels", [])
    return out


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_is_an_importable_grafana_dashboard(path: Path) -> None:
    dashboard = json.loads(path.read_text())
    # a datasource variable, which file provisioning resolves (tests/test_grafana_dashboards.py)
    assert dashboard["templating"]["list"][0]["name"] == "DS_PROMETHEUS"
    assert isinstance(dashboard["schemaVersion"], int) and dashboard["schemaVersion"] >= 36
    assert dashboard["title"] and dashboard["uid"] and dashboard["panels"]
    ids = [panel["id"] for panel in panels_of(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in panels_of(dashboard):
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"] and target["refId"], panel["title"]
            assert target["datasource"] == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}, panel["title"]


def test_dashboard_expressions_parse_and_read_exported_metrics(tmp_path: Path) -> None:
    rules: list[dict[str, str]] = []
    for path in DASHBOARDS:
        for panel in panels_of(json.loads(path.read_text())):
            for target in panel.get("targets", []):
                # Grafana's variables as PromQL sees them once Grafana has substituted them
                expr = target["expr"].replace("$__rate_interval", "5m").replace("$__range", "1h")
                assert set(DCGM_NAME.findall(expr)) <= dcgm_counters(), (path.name, panel["title"])
                rules.append({"record": f"dashboard:{len(rules)}", "expr": expr})
    path = tmp_path / "dashboards.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}, sort_keys=False))
    result = run([promtool(), "check", "rules", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr
