"""The engine around the rules: levels, skips, fail level, waivers and a rule that raises."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.policies import load_policy_config, load_waivers
from clusterforge.policies.registry import REGISTRY, Rule
from clusterforge.policies.waivers import Waiver, WaiverEntry
from tests.policies.builders import config, evaluate_data, feed, onprem, rack

# two feeds a side at 208 V 3φ 30 A (8.65 kW each): 20.4 kW is 5.1 kW a feed (fine) but 20.4 > 17.3 a side: PWR-002
OVER = onprem([rack(count=2, feeds=[feed("a01-a", "A", 208, 30), feed("a01-a2", "A", 208, 30),
                                    feed("a01-b", "B", 208, 30), feed("a01-b2", "B", 208, 30)])])
TODAY = dt.date(2026, 11, 21)


def test_every_policies_md_id_is_registered() -> None:
    from clusterforge.policies.discovery import load_rules

    load_rules()

    expected = {f"PWR-00{i}" for i in range(1, 8)} | {f"RCK-00{i}" for i in range(1, 7)} | \
        {f"CLG-00{i}" for i in range(1, 8)} | {f"NET-00{i}" for i in range(1, 7)} | \
        {"STO-001", "STO-002", "STO-003", "SW-001", "SW-002", "SLM-001", "SLM-002"}
    assert expected <= set(REGISTRY)
    assert all(rule.doc and rule.source for rule in REGISTRY.values())


def test_level_override_and_fail_level() -> None:
    base = onprem()
    assert not evaluate_data(base).failed                       # PWR-003 is a warning
    assert evaluate_data(base, fail_level="warning").failed
    assert evaluate_data(base, config(**{"PWR-003": {"level": "error"}})).failed


def test_skip_removes_the_rule() -> None:
    assert evaluate_data(OVER).failed
    verdict = evaluate_data(OVER, skip=["PWR-002"])
    assert not verdict.failed and "PWR-002" not in verdict.rules_run


def test_threshold_override_changes_the_verdict() -> None:
    # 3 DGX = 30.6 kW of 34.5 kW per side = 89 %: silent at the default 90 %, a warning at 50 %
    assert not [f for f in evaluate_data(onprem([rack(count=3)])).findings if f.id == "PWR-002"]
    verdict = evaluate_data(onprem([rack(count=3)]), config(**{"PWR-002": {"warn_fraction": 0.5}}))
    assert [f.level for f in verdict.findings if f.id == "PWR-002"] == ["warning"]


def test_a_rule_that_raises_becomes_an_error_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.policies.discovery import load_rules

    load_rules()

    def boom(ctx: object, settings: object) -> list[object]:
        raise ZeroDivisionError("division by zero")

    original = REGISTRY["RCK-002"]
    monkeypatch.setitem(REGISTRY, "RCK-002", Rule(**{**original.__dict__, "check": boom}))
    verdict = evaluate_data(onprem())
    [finding] = [f for f in verdict.findings if f.id == "RCK-002"]
    assert finding.level == "error" and "ZeroDivisionError" in finding.message
    assert any(f.id == "PWR-003" for f in verdict.findings)  # the other rules still ran


def _waivers(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "waivers.yaml"
    path.write_text("waivers:\n" + body)
    return path


def test_waiver_moves_the_finding_and_keeps_it_reported(tmp_path: Path) -> None:
    w = _waivers(tmp_path, "  - {rule: PWR-002, cluster: t, target: 'site.rows[0].racks[0].feeds', "
                           "reason: 'feeds upgraded "
                           "in Q1 change CHG-1', expires: 2027-03-31, approver: ops-lead}\n")
    verdict = evaluate_data(OVER, waivers=load_waivers(w), today=TODAY)
    assert not verdict.failed
    [waived] = verdict.waived
    assert waived.id == "PWR-002" and waived.waiver and waived.waiver["approver"] == "ops-lead"


def test_waiver_wildcards(tmp_path: Path) -> None:
    w = _waivers(tmp_path, "  - {rule: PWR-002, cluster: t, target: 'site.rows[*].racks[*].feeds', "
                           "reason: 'accepted for "
                           "the pilot hall', expires: 2027-03-31}\n")
    assert not evaluate_data(OVER, waivers=load_waivers(w), today=TODAY).failed


@pytest.mark.parametrize(("target", "path", "covered"), [
    ("site.rows[0].racks[1]", "site.rows[0].racks[1].feeds", True),
    ("site.rows[*].racks[*]", "site.rows[0].racks[1].feeds", True),  # a pattern covers the paths below it too
    ("site.rows[*].racks[*]", "site.rows[0].racks[1]", True),
    ("site.rows[*].racks[1]", "site.rows[0].racks[12].feeds", False),
    ("site.rows[0].racks", "site.rows[0].racks_extra", False),
])
def test_a_waiver_target_covers_itself_and_the_paths_below_it(target: str, path: str, covered: bool) -> None:
    entry = WaiverEntry(rule="PWR-002", cluster="t", target=target, reason="covers the paths below",
                        expires=dt.date(2099, 1, 1))
    assert Waiver(entry, "w.yaml", 1).matches("PWR-002", path, "t") is covered
    assert not Waiver(entry, "w.yaml", 1).matches("PWR-002", path, "other")  # another cluster: never


def test_a_waiver_target_of_stars_is_matched_without_backtracking() -> None:
    """300 `*` compiled into a regular expression ran for hours against a path it does not match."""
    entry = WaiverEntry(rule="PWR-002", cluster="t", target="*" * 299 + "x", reason="a hostile target",
                        expires=dt.date(2099, 1, 1))
    waiver = Waiver(entry, "w.yaml", 1)
    path = "site.rows[0].racks[1].feeds[0]." + "a" * 5000
    start = time.monotonic()
    assert not waiver.matches("PWR-002", path, "t")
    assert waiver.matches("PWR-002", "x", "t") and waiver.matches("PWR-002", "abcx.feeds", "t")
    assert time.monotonic() - start < 0.1


def test_a_waiver_applies_to_the_cluster_it_names_only(tmp_path: Path) -> None:
    body = ("  - {rule: PWR-002, cluster: %s, target: 'site.rows[0].racks[0].feeds', reason: 'feeds upgraded "
            "in Q1 change CHG-1', expires: 2027-03-31}\n")
    assert not evaluate_data(OVER, waivers=load_waivers(_waivers(tmp_path, body % "t")), today=TODAY).failed
    verdict = evaluate_data(OVER, waivers=load_waivers(_waivers(tmp_path, body % "beta")), today=TODAY)
    assert verdict.failed and not verdict.waived
    assert {f.id for f in verdict.findings} >= {"PWR-002", "WVR-002"}


def test_a_waiver_without_a_cluster_is_refused_with_what_to_add(tmp_path: Path) -> None:
    w = _waivers(tmp_path, "  - {rule: PWR-002, target: x, reason: 'long enough reason', expires: 2027-01-01}\n")
    with pytest.raises(ClusterforgeError) as exc:
        load_waivers(w)
    [problem] = exc.value.problems
    assert problem.line == 2 and "missing required key 'cluster'" in problem.message
    assert "add `cluster: <name>`" in problem.hint


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\ufeff", "\u00ad", "\U000e0041"])
def test_waiver_text_refuses_invisible_characters(tmp_path: Path, char: str) -> None:
    for key in ("reason", "approver"):
        w = _waivers(tmp_path, f"  - {{rule: PWR-002, cluster: t, target: x, {key}: 'long enough {char}reason', "
                     f"expires: 2027-01-01{', reason: long enough reason' if key == 'approver' else ''}}}\n")
        with pytest.raises(ClusterforgeError, match="no control, format or invisible characters"):
            load_waivers(w)


def test_expired_waiver_is_an_error_and_waives_nothing(tmp_path: Path) -> None:
    w = _waivers(tmp_path, "  - {rule: PWR-002, cluster: t, target: 'site.rows[0].racks[0].feeds', "
                           "reason: 'feeds upgraded "
                           "in Q1 change CHG-1', expires: 2026-01-31}\n")
    verdict = evaluate_data(OVER, waivers=load_waivers(w), today=TODAY)
    ids = sorted(f.id for f in verdict.errors)
    assert ids == ["PWR-002", "WVR-001"] and not verdict.waived
    expired = next(f for f in verdict.errors if f.id == "WVR-001")
    assert expired.file == str(w) and expired.line == 2


def test_unused_waiver_is_a_warning(tmp_path: Path) -> None:
    w = _waivers(tmp_path, "  - {rule: RCK-002, cluster: t, target: 'site.rows[0].racks[0]', "
                           "reason: 'heavy rack accepted "
                           "by facilities', expires: 2027-03-31}\n")
    verdict = evaluate_data(onprem(), waivers=load_waivers(w), today=TODAY)
    assert {(f.id, f.level) for f in verdict.findings} == {("WVR-002", "warning"), ("PWR-003", "warning")}


@pytest.mark.parametrize(("body", "fragment"), [
    ("  - {rule: PWR-002, cluster: t, target: x, expires: 2027-01-01}\n", "missing required key 'reason'"),
    ("  - {rule: PWR-002, cluster: t, target: x, reason: 'long enough reason'}\n", "missing required key 'expires'"),
    ("  - {rule: PWR-002, cluster: t, target: x, reason: short, expires: 2027-01-01}\n", "at least 10 characters"),
])
def test_waiver_needs_reason_and_expiry(tmp_path: Path, body: str, fragment: str) -> None:
    with pytest.raises(ClusterforgeError) as exc:
        load_waivers(_waivers(tmp_path, body))
    assert fragment in str(exc.value) and exc.value.problems[0].line == 2


def test_policy_config_errors_are_located(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("rules:\n  PWR-02: {level: warning}\n  CLG-001:\n    warn_fraction: lots\n")
    with pytest.raises(ClusterforgeError) as exc:
        load_policy_config(path)
    rendered = [p.render() for p in exc.value.problems]
    assert any(":2: rules.PWR-02: unknown rule 'PWR-02' (did you mean PWR-002?)" in r for r in rendered), rendered
    assert any(":4: rules.CLG-001.warn_fraction: expected a number" in r for r in rendered), rendered


def test_policy_config_file_applies(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("electrical: {derate: 1.0}\nrules:\n  PWR-003: {enabled: false}\n")
    cfg = load_policy_config(path)
    # without the 80 % derate a 208 V 3φ 30 A side gives 10.8 kW: 20.4 still exceeds it
    assert [f.id for f in evaluate_data(OVER, cfg).findings] == ["PWR-002"]
