"""Render of the failure handling and operations settings: slurm.recovery in slurm.conf, operations.* in
group_vars for the telemetry, monitoring, health and remediation roles, and the shape checks of both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.render.conf_settings import merged_options
from tests.test_render_slurm_features import CTL, GPU, blueprint, group_vars, pairs, rendered

LOGIN = {"name": "mon", "hardware": "cpu-1u", "count": 2, "role": "login"}
ONE = [{**CTL, "count": 1}, GPU]  # one controller: no HA state to place


def with_ops(data: dict, **operations: Any) -> dict:
    data["operations"] = operations
    return data


def test_defaults_requeue_fast_and_reboot_through_the_health_role(cli, write, tmp_path: Path) -> None:
    settings = dict(pairs(rendered(cli, write, tmp_path, blueprint(ONE)) / "slurm" / "slurm.conf"))
    assert {k: settings[k] for k in ("JobRequeue", "ReturnToService", "AuthInfo", "SchedulerParameters",
                                     "ResumeTimeout", "HealthCheckInterval", "RebootProgram", "Prolog",
                                     "Epilog")} == {
        "JobRequeue": "1", "ReturnToService": "1", "AuthInfo": "cred_expire=60",
        "SchedulerParameters": "nohold_on_prolog_fail,sched_interval=10", "ResumeTimeout": "900",
        "HealthCheckInterval": "300", "RebootProgram": "/usr/local/sbin/clusterforge-reboot",
        "Prolog": "/etc/slurm/prolog.d/*", "Epilog": "/etc/slurm/epilog.d/*"}
    assert "RequeueExit" not in settings and "RequeueExitHold" not in settings


def test_the_blueprint_sets_every_recovery_value(cli, write, tmp_path: Path) -> None:
    data = blueprint(ONE, recovery={"job_requeue": False, "return_to_service": 2, "cred_expire_s": 30,
                               "sched_interval_s": 5, "requeue_exit": [42, 44], "requeue_exit_hold": [43],
                               "resume_timeout_s": 600})
    data = with_ops(data, health={"interval_s": 120, "prolog": False, "epilog": False})
    out = rendered(cli, write, tmp_path, data)
    settings = dict(pairs(out / "slurm" / "slurm.conf"))
    assert {k: settings[k] for k in ("JobRequeue", "ReturnToService", "AuthInfo", "SchedulerParameters",
                                     "RequeueExit", "RequeueExitHold", "ResumeTimeout", "HealthCheckInterval")} == {
        "JobRequeue": "0", "ReturnToService": "2", "AuthInfo": "cred_expire=30",
        "SchedulerParameters": "nohold_on_prolog_fail,sched_interval=5", "RequeueExit": "42,44",
        "RequeueExitHold": "43", "ResumeTimeout": "600", "HealthCheckInterval": "120"}
    assert "Prolog" not in settings and "Epilog" not in settings  # neither the health check's nor the blueprint's
    data = group_vars(out)
    assert (data["slurm_prolog_epilog"], data["health_prolog_enabled"], data["health_epilog_enabled"]) == (
        False, False, False)


@pytest.mark.parametrize(("ours", "theirs", "merged"), [
    ("nohold_on_prolog_fail,sched_interval=10", "sched_interval=20", "nohold_on_prolog_fail,sched_interval=20"),
    ("nohold_on_prolog_fail,sched_interval=10", "bf_continue,NOHOLD_ON_PROLOG_FAIL",
     "nohold_on_prolog_fail,sched_interval=10,bf_continue"),
    ("cred_expire=60", "socket=/run/munge/munge.socket.2", "cred_expire=60,socket=/run/munge/munge.socket.2"),
    ("enable_configless", "enable_configless", "enable_configless"),
])
def test_a_blueprint_option_replaces_ours_by_name(ours: str, theirs: str, merged: str) -> None:
    assert merged_options(ours, theirs) == merged


def test_settings_may_tune_the_scheduler_options_we_write(cli, write, tmp_path: Path) -> None:
    data = blueprint(ONE, settings={"SchedulerParameters": "sched_interval=20,bf_continue",
                                    "AuthInfo": "cred_expire=45"})
    settings = dict(pairs(rendered(cli, write, tmp_path, data) / "slurm" / "slurm.conf"))
    assert settings["SchedulerParameters"] == "nohold_on_prolog_fail,sched_interval=20,bf_continue"
    assert settings["AuthInfo"] == "cred_expire=45"


@pytest.mark.parametrize(("key", "field"), [("JobRequeue", "slurm.recovery.job_requeue"),
                                            ("requeueexit", "slurm.recovery.requeue_exit"),
                                            ("ResumeTimeout", "slurm.recovery.resume_timeout_s"),
                                            ("HealthCheckInterval", "operations.health.interval_s")])
def test_settings_cannot_take_over_a_recovery_field(cli, write, key: str, field: str) -> None:
    result = cli("validate", write(yaml.safe_dump(blueprint(ONE, settings={key: "1"}), sort_keys=False)))
    assert result.exit_code == 2, result.output
    assert f"is set by {field}, not slurm.settings" in result.output


def test_group_vars_carry_the_operations_settings(cli, write, tmp_path: Path) -> None:
    data = with_ops(blueprint([{**CTL, "count": 1}, LOGIN, GPU]),
                    monitoring={"pool": "mon", "scrape_interval_s": 5, "node_down_for_s": 15, "retention_days": 30,
                                "alert_webhooks": ["https://alerts.example.com/hooks/gpu?team=ml"]},
                    health={"dcgm_diag_level": 0}, remediation={"max_reboots": 3, "window_h": 12, "interval_s": 30})
    data = group_vars(rendered(cli, write, tmp_path, data))
    assert {k: v for k, v in data.items() if k.startswith(("monitoring_", "remediation_", "health_"))} == {
        "monitoring_enabled": True, "monitoring_host": "mon-0001", "monitoring_scrape_interval_s": 5,
        "monitoring_node_down_for_s": 15, "monitoring_retention_days": 30,
        "monitoring_alert_webhooks": ["https://alerts.example.com/hooks/gpu?team=ml"],
        "health_prolog_enabled": True, "health_epilog_enabled": True, "health_dcgm_diag_level": 0,
        "remediation_enabled": True, "remediation_max_reboots": 3, "remediation_window_h": 12,
        "remediation_interval_s": 30}


def test_monitoring_runs_on_the_primary_controller_by_default(cli, write, tmp_path: Path) -> None:
    data = group_vars(rendered(cli, write, tmp_path, blueprint(ONE)))
    assert (data["monitoring_enabled"], data["monitoring_host"]) == (True, "ctl-0001")
    off = group_vars(rendered(cli, write, tmp_path, with_ops(blueprint(ONE), monitoring={"enabled": False})))
    assert off["monitoring_enabled"] is False


@pytest.mark.parametrize(("operations", "slurm", "message"), [
    ({"monitoring": {"pool": "mon"}}, {}, "operations.monitoring.pool: unknown pool 'mon'"),
    ({}, {"recovery": {"requeue_exit": [42], "requeue_exit_hold": [42]}},
     "slurm.recovery.requeue_exit_hold: exit code 42 is in both requeue_exit and requeue_exit_hold"),
    ({"monitoring": {"alert_webhooks": ["http://x.example.com/a\nb"]}}, {}, "operations.monitoring.alert_webhooks[0]"),
    ({"monitoring": {"alert_webhooks": ["file:///etc/passwd"]}}, {}, "operations.monitoring.alert_webhooks[0]"),
    ({}, {"recovery": {"requeue_exit": [0]}}, "slurm.recovery.requeue_exit[0]"),
    ({"health": {"dcgm_diag_level": 3}}, {}, "operations.health.dcgm_diag_level"),
])
def test_bad_operations_are_input_errors_with_their_line(cli, write, operations: dict, slurm: dict,
                                                         message: str) -> None:
    data = with_ops(blueprint(ONE, **slurm), **operations)
    result = cli("validate", write(yaml.safe_dump(data, sort_keys=False)))
    assert result.exit_code == 2, result.output
    assert message in result.output and "bp.yaml:" in result.output
    assert "Traceback" not in result.output
