"""The health check's reason codes have one table, roles/health/codes.yml, and everything else that names them agrees
with it: the check files' `fail CODE ACTION` calls, the script's list of on-demand codes, the alert rules and their
inhibit rules, the remediation role's list of reboot codes, and the docs' tables. Each check is a function that
returns what disagrees, so a test breaks each subject once and sees it named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

HEALTH = ROOT / "roles" / "health"
TABLE = HEALTH / "codes.yml"
MONITORING = ROOT / "roles" / "monitoring" / "templates"
GENERIC = "NodeHealthCheckFailing"
FAIL = re.compile(r"\b(?:fail|mount_check)\s+\"?([a-z][a-z0-9-]*)\"?\s+(reboot|person)\b")
PERF = re.compile(r"\(\"(gpu-[a-z]+)\", ")  # the perf tier's own failures, in its Python: ("gpu-sdc", detail)


def table() -> dict[str, dict[str, Any]]:
    rows = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["codes"]
    return {row["code"]: row for row in rows}


def health_sources(root: Path = HEALTH / "files") -> str:
    """The script and its check files, as one text."""
    files = [root / "clusterforge-health", *sorted((root / "clusterforge-health.d").glob("*.sh"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in files if path.is_file())


def script_problems(codes: dict[str, dict[str, Any]], text: str) -> list[str]:
    """Each `fail CODE ACTION` is a row's code and one of its actions; every row is failed somewhere; the script's
    on-demand codes are the rows of the perf and diag tiers."""
    used = set(FAIL.findall(text)) | {(code, "person") for code in PERF.findall(text)}
    out = [f"the script fails {code} ({action}), which codes.yml does not list"
           for code, action in sorted(used) if action not in codes.get(code, {}).get("actions", ())]
    out += [f"codes.yml lists {code}, which no check fails" for code in codes if code not in {c for c, _ in used}]
    deep = re.search(r'^DEEP_TIER_CODES="([^"]*)"', text, re.M)
    on_demand = {code for code, row in codes.items() if {"perf", "diag"} & set(row["tiers"])}
    if deep is None or set(deep.group(1).split()) != on_demand:
        out.append(f"DEEP_TIER_CODES is not the perf and diag tiers' codes ({' '.join(sorted(on_demand))})")
    return out


def alert_blocks(directory: Path = MONITORING) -> dict[str, str]:
    """Each alert rule's text (from `- alert: NAME` to the next one), by name, over every alerts-*.yml.j2."""
    blocks: dict[str, str] = {}
    for path in sorted(directory.glob("alerts-*.yml.j2")):
        parts = re.split(r"^\s*- alert: (\w+)\s*$", path.read_text(encoding="utf-8"), flags=re.M)
        blocks.update(zip(parts[1::2], parts[2::2], strict=True))
    return blocks


def alert_problems(codes: dict[str, dict[str, Any]], blocks: dict[str, str]) -> list[str]:
    """A dedicated alert reads its code (and action, where the code has two); the generic alert leaves out exactly
    the codes with a dedicated alert, and takes back the action of a code that has only one."""
    out = []
    generic = blocks.get(GENERIC, "")
    left_out = re.search(r'code!~"([^"]*)"', generic)
    dedicated = {code for code, row in codes.items() if set(row["alerts"].values()) - {GENERIC}}
    if left_out is None or set(left_out.group(1).split("|")) != dedicated:
        out.append(f"{GENERIC} must leave out exactly {'|'.join(sorted(dedicated))}")
    for code, row in codes.items():
        for action, alert in row["alerts"].items():
            if alert == GENERIC:
                if code in dedicated:
                    other = next(a for a, name in row["alerts"].items() if name != GENERIC)
                    if f'code="{code}", action!="{other}"' not in generic:
                        out.append(f"{GENERIC} does not take back {code} ({action})")
                continue
            text = blocks.get(alert)
            wanted = f'code="{code}"' + (f', action="{action}"' if len(row["alerts"]) > 1 else "")
            if text is None or wanted not in text:
                out.append(f"alert {alert} does not read {wanted}")
    return out


def inhibit_problems(codes: dict[str, dict[str, Any]],
                     template: Path = MONITORING / "alertmanager.yml.j2") -> list[str]:
    """Alertmanager's inhibit rules mute the generic alert for exactly the codes a GPU alert names."""
    table_text = re.search(r"for alert, code in \{(.*?)\}\.items\(\)", template.read_text(encoding="utf-8"), re.S)
    found = dict(re.findall(r"'(\w+)': '([a-z0-9-]+)'", table_text.group(1) if table_text else ""))
    wanted = {row["inhibited_by"]: code for code, row in codes.items() if row.get("inhibited_by")}
    return [] if found == wanted else [f"alertmanager.yml.j2 inhibits {found}, codes.yml says {wanted}"]


def remediation_problems(codes: dict[str, dict[str, Any]], readme: Path = ROOT / "roles/remediation/README.md"
                         ) -> list[str]:
    """The remediation role's README lists the codes it reboots for: those whose actions include reboot."""
    text = " ".join(readme.read_text(encoding="utf-8").split())
    listed = re.search(r"Codes whose action is `reboot`[^:]*: (.*?)\. Everything else", text)
    found = set(re.findall(r"`([a-z][a-z0-9-]*)`", listed.group(1))) if listed else set()
    wanted = {code for code, row in codes.items() if "reboot" in row["actions"]}
    return [] if found == wanted else [f"roles/remediation/README.md lists {sorted(found)}, not {sorted(wanted)}"]


def doc_rows(path: Path) -> dict[str, str]:
    """A docs table's rows by code: the text of the row, for each code in its first cell."""
    rows: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip().startswith("`"):
            for code in re.findall(r"`([a-z][a-z0-9-]*)`", cells[1]):
                rows.setdefault(code, "|".join(cells[2:]))
    return rows


def doc_problems(codes: dict[str, dict[str, Any]], path: Path) -> list[str]:
    """A docs table names every code once with its actions (and the health README its check too)."""
    rows = doc_rows(path)
    out = [f"{path.relative_to(ROOT)} has no row for {code}" for code in codes if code not in rows]
    for code, row in codes.items():
        text = rows.get(code, "")
        out += [f"{path.relative_to(ROOT)}: {code}'s row does not say {action}" for action in row["actions"]
                if text and action not in text]
    return out


def test_the_table_is_well_formed() -> None:
    codes = table()
    for code, row in codes.items():
        assert re.fullmatch(r"[a-z][a-z0-9-]*", code)
        assert set(row["actions"]) <= {"reboot", "person"} and row["actions"], code
        assert set(row["alerts"]) == set(row["actions"]), code
        assert set(row["tiers"]) <= {"every", "periodic", "perf", "diag"} and row["tiers"], code
        assert row["doc"].strip(), code


def test_the_checks_fail_exactly_the_codes_of_the_table() -> None:
    assert script_problems(table(), health_sources()) == []


def test_the_alerts_and_inhibit_rules_follow_the_table() -> None:
    codes = table()
    assert alert_problems(codes, alert_blocks()) == []
    assert inhibit_problems(codes) == []


def test_the_remediation_role_reboots_for_the_reboot_codes() -> None:
    assert remediation_problems(table()) == []


@pytest.mark.parametrize("page", ["roles/health/README.md", "docs/operations.md"])
def test_each_docs_table_has_every_code_with_its_actions(page: str) -> None:
    assert doc_problems(table(), ROOT / page) == []


def test_each_check_finds_what_disagrees() -> None:
    """Break each subject once: a code the script fails that the table lacks, a dedicated alert that reads no
    code, an inhibit rule too many, a reboot code left off remediation's list, a code without a docs row."""
    codes = table()
    text = health_sources()
    assert script_problems(codes, text + '\nfail gpu-new person "x"\n') == [
        "the script fails gpu-new (person), which codes.yml does not list"]
    assert script_problems({**codes, "gpu-gone": {**codes["disk"], "code": "gpu-gone"}}, text) == [
        "codes.yml lists gpu-gone, which no check fails"]
    blocks = alert_blocks()
    assert alert_problems(codes, {**blocks, "LustreNotMounted": "expr: up == 0"}) == [
        'alert LustreNotMounted does not read code="lustre-mount"']
    moved = {**codes, "disk": {**codes["disk"], "alerts": {"person": "DiskFull"}}}
    assert f"{GENERIC} must leave out" in alert_problems(moved, blocks)[0]
    assert inhibit_problems({**codes, "disk": {**codes["disk"], "inhibited_by": "DiskFull"}}) != []
    assert remediation_problems({**codes, "disk": {**codes["disk"], "actions": ["reboot"]}}) != []
    assert doc_problems({**codes, "gpu-new": codes["disk"]}, ROOT / "docs/operations.md") == [
        "docs/operations.md has no row for gpu-new"]
