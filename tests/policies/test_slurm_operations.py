"""SLURM operations rules: QOS preemption (SLM-003), accounts (SLM-004), accounting (SLM-005), HA state
(SLM-006), pass-through settings (SLM-007) and the SLURM release (SW-003). Each case fires or stays quiet."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from clusterforge.policies.domains import software
from tests.policies.builders import design, evaluate_data, found

CTL = {"name": "ctl", "hardware": "cpu-1u", "role": "controller"}
GPU = {"name": "gpu", "hardware": "dgx-h100", "count": 4, "partition": "train"}


def with_slurm(**slurm: Any) -> dict:
    """A design-only blueprint with a controller pool, its `slurm:` section extended by `slurm`."""
    data = design([{**CTL, "count": 1}, GPU])
    data["slurm"] |= slurm
    return data


def low_high(**high: Any) -> list[dict]:
    return [{"name": "low", "priority": 0}, {"name": "high", "priority": 1000, "preempt": ["low"], **high}]


@pytest.mark.parametrize(("qos", "mode", "fires"), [
    (low_high(), "requeue", False),
    ([{"name": "high", "preempt": ["normal"]}], "requeue", False),           # normal exists in every database
    ([{"name": "high", "preempt": ["high"]}], "requeue", True),             # itself
    ([{"name": "high", "preempt": ["lwo"]}, {"name": "low"}], "requeue", True),  # unknown (did you mean low)
    ([{"name": "a", "preempt": ["b"]}, {"name": "b", "preempt": ["c"]}, {"name": "c", "preempt": ["a"]}],
     "requeue", True),                                                      # a cycle of three
    ([{"name": "a", "preempt": ["b"]}, {"name": "b", "preempt": ["c"]}, {"name": "c"}], "cancel", False),
    (low_high(), "off", True),                                              # preempt lists with preemption off
    ([{"name": "low"}, {"name": "high", "priority": 10}], "off", False),
])
def test_slm003_qos_preemption(qos: list[dict], mode: str, fires: bool) -> None:
    assert found(with_slurm(qos=qos, preempt_mode=mode)) == (["SLM-003"] if fires else [])


def test_slm003_says_where_and_what() -> None:
    qos = [{"name": "a", "preempt": ["b"]}, {"name": "b", "preempt": ["a", "lwo"]}, {"name": "low"}]
    findings = [f for f in evaluate_data(with_slurm(qos=qos)).findings if f.id == "SLM-003"]
    assert {(f.path, f.message) for f in findings} == {
        ("slurm.qos[1].preempt[1]", "QOS b's preempt list names QOS lwo, which slurm.qos does not declare"),
        ("slurm.qos[0].preempt", "QOS preempt one another in a cycle: a → b → a")}
    assert next(f.hint for f in findings if "lwo" in f.message) == "did you mean low?"
    assert all(f.file == "bp.yaml" and f.line > 0 for f in findings)


@pytest.mark.parametrize(("accounts", "fires"), [
    ([{"name": "physics", "qos": ["normal", "low", "high"], "default_qos": "normal", "users": ["alice"]}], False),
    ([{"name": "physics", "default_qos": "normal"}], False),                # no list: the default QOS normal
    ([{"name": "physics"}, {"name": "chemistry", "fairshare": 40}], False),
    ([{"name": "physics", "qos": ["normal", "hihg"]}], True),               # unknown QOS
    ([{"name": "physics", "qos": ["low"], "default_qos": "high"}], True),   # default not among its QOS
    ([{"name": "physics", "default_qos": "low"}], True),                    # no list means normal only
    ([{"name": "physics", "qos": ["low"], "default_qos": "urgent"}], True),  # default unknown
])
def test_slm004_accounts(accounts: list[dict], fires: bool) -> None:
    assert found(with_slurm(qos=low_high(), accounts=accounts)) == (["SLM-004"] if fires else [])


@pytest.mark.parametrize(("key", "entries", "what"), [
    ("qos", [{"name": "low"}, *({"name": "high"} for _ in range(999))], "QOS"),
    ("accounts", [{"name": "physics"}, {"name": "physics"}], "account"),
])
def test_a_name_declared_twice_is_a_validate_error_at_its_line(cli, tmp_path, key: str, entries: list[dict],
                                                               what: str) -> None:
    """Before any rule: a QOS or account given twice is an input error at the second entry, said once however
    often it repeats (and never listed name by name in a hint)."""
    import yaml

    path = tmp_path / "bp.yaml"
    path.write_text(yaml.safe_dump(with_slurm(**{key: entries}), sort_keys=False))
    result = cli("validate", str(path))
    assert result.exit_code == 2, result.output
    name, second = ("high", 2) if key == "qos" else ("physics", 1)
    assert f"slurm.{key}[{second}].name: duplicate {what} name '{name}' (first on line" in result.output, result.output
    assert result.output.count(f"'{name}'") <= 20, result.output[-500:]  # 998 repeats: 20 said, the rest counted
    assert ("more like this" in result.output) == (len(entries) > 20)


@pytest.mark.parametrize(("slurm", "fires"), [
    ({"qos": low_high()}, False),
    ({"accounting": {"enabled": False}}, False),
    ({"accounting": {"enabled": False}, "qos": low_high()}, True),
    ({"accounting": {"enabled": False}, "accounts": [{"name": "physics"}]}, True),
    ({"accounting": {"pool": "ctl"}}, False),
    ({"accounting": {"pool": "gpu"}}, True),                                # slurmdbd on a compute pool
])
def test_slm005_accounting(slurm: dict, fires: bool) -> None:
    assert found(with_slurm(**slurm)) == (["SLM-005"] if fires else [])


@pytest.mark.parametrize(("count", "storage", "state", "fires"), [
    (1, {}, None, False),                                                   # one controller: local state is fine
    (2, {}, None, True),                                                    # HA, nothing shared
    (2, {"shared": {"mount": "/shared"}}, None, True),                      # HA, shared storage unused
    (2, {"shared": {"mount": "/shared"}}, "/shared/slurm/state", False),
    (2, {"shared": {"mount": "/shared"}}, "/shared", False),
    (2, {"shared": {"mount": "/shared"}}, "/sharedfoo/state", True),        # a prefix is not a mount
    (3, {"lustre": {"mount": "/lustre"}}, "/lustre/slurm", False),          # the Lustre mount counts too
])
def test_slm006_ha_state(count: int, storage: dict, state: str | None, fires: bool) -> None:
    data = design([{**CTL, "count": count}, GPU], storage=storage)
    if state:
        data["slurm"]["state_save_location"] = state
    assert found(data) == (["SLM-006"] if fires else [])


def test_slm006_hint_names_the_mount() -> None:
    data = design([{**CTL, "count": 2}, GPU], storage={"shared": {"mount": "/shared"}})
    finding = next(f for f in evaluate_data(data).findings if f.id == "SLM-006")
    assert finding.path == "slurm.state_save_location" and "/shared/slurm/state" in finding.hint


@pytest.mark.parametrize(("settings", "cgroup", "version", "fires"), [
    ({"SchedulerParameters": "bf_continue", "AuthInfo": "cred_expire=30", "SlurmctldTimeout": 10}, {}, "24.11",
     False),
    ({"schedulerparameters": "bf_continue"}, {}, "24.11", False),           # SLURM ignores the case of keys
    ({"SchedulerParameter": "bf_continue"}, {}, "24.11", True),
    ({}, {"AllowedRAMSpace": "98", "ConstrainSwapSpace": "yes"}, "24.11", False),
    ({}, {"AllowedRAMSpac": "98"}, "24.11", True),
    ({}, {"ConstrainKmemSpace": "no"}, "24.11", True),                      # removed in 23.02
    ({}, {"ConstrainKmemSpace": "no"}, "22.05", False),
    ({"HashPlugin": "hash/k12"}, {}, "22.05", True),                        # new in 24.05
    ({"HashPlugin": "hash/k12"}, {}, "24.11.5", False),                     # a maintenance pin is its release
])
def test_slm007_settings(settings: dict, cgroup: dict, version: str, fires: bool) -> None:
    data = with_slurm(settings=settings, cgroup_settings=cgroup)
    data["software"] = {"slurm": version}
    assert found(data) == (["SLM-007"] if fires else [])


def test_slm007_hints() -> None:
    data = with_slurm(settings={"SchedulerParameter": "x", "HashPlugin": "hash/k12"})
    data["software"] = {"slurm": "22.05"}
    hints = {f.path: f.hint for f in evaluate_data(data).findings if f.id == "SLM-007"}
    assert hints["slurm.settings.SchedulerParameter"] == "did you mean SchedulerParameters?"
    assert hints["slurm.settings.HashPlugin"].startswith("it is a parameter of SLURM 24.05, 24.11")


def test_slm007_a_release_without_a_list_is_not_checked(tmp_path) -> None:
    from clusterforge.target_kernel import load_catalog

    site = tmp_path / "site.yaml"
    site.write_text("apiVersion: clusterforge/v1\nkind: Catalog\nsoftware:\n  slurm:\n"
                    "    - {slurm: '27.05', supported_until: '2099-01', supported_by: site, source: qualified here}\n")
    data = with_slurm(settings={"Anything": "x"})
    data["software"] = {"slurm": "27.05"}
    verdict = evaluate_data(data, catalog=load_catalog([site]))
    assert [(f.id, f.level) for f in verdict.findings if f.id.startswith(("SLM", "SW"))] == [("SLM-007", "info")]


@pytest.mark.parametrize(("version", "today", "expect"), [
    ("24.11", dt.date(2026, 11, 22), []),
    ("24.11.5", dt.date(2026, 11, 22), []),
    ("22.05", dt.date(2026, 11, 22), [("SW-003", "warning")]),               # Debian 12's support ended 2026-06
    ("22.05", dt.date(2026, 6, 30), []),                                    # still within its last month
    ("24.11", dt.date(2028, 9, 1), [("SW-003", "warning")]),
    ("21.08", dt.date(2026, 11, 22), [("SW-003", "error")]),                 # not in the tables
    ("latest", dt.date(2026, 11, 22), [("SW-002", "error")]),               # SW-002's, not SW-003's
])
def test_sw003_slurm_release(version: str, today: dt.date, expect: list, monkeypatch) -> None:
    monkeypatch.setattr(software, "today", lambda: today)
    verdict = evaluate_data(design(software={"slurm": version}))
    assert [(f.id, f.level) for f in verdict.findings if f.id.startswith("SW")] == expect


def test_sw003_names_the_supported_releases(monkeypatch) -> None:
    monkeypatch.setattr(software, "today", lambda: dt.date(2026, 11, 22))
    finding = next(f for f in evaluate_data(design(software={"slurm": "22.05"})).findings if f.id == "SW-003")
    assert finding.path == "software.slurm" and "Debian 12" in finding.message
    assert finding.hint == "pin a supported release: 24.11, 25.05, 25.11, 26.05"
