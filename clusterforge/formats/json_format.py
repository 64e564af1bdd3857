"""`{"verdict": "pass"|"fail", "findings": [...], "waived": [...]}`.

Files are named relative to the working directory, never absolutely (files.paths.machine_path), and numbers
are rounded, in the figures and in the text (formats.numbers)."""

from __future__ import annotations

from typing import Any

from clusterforge.files.paths import machine_path
from clusterforge.formats.json_text import dumps
from clusterforge.formats.numbers import tidy_all, tidy_text
from clusterforge.policies import Finding, Verdict


def finding_data(finding: Finding) -> dict[str, Any]:
    """One finding as plain data, as machine formats write it."""
    data: dict[str, Any] = tidy_all(finding.to_json())
    data["file"] = machine_path(finding.file)
    for key in ("message", "hint"):
        if isinstance(data.get(key), str):
            data[key] = tidy_text(data[key])
    waiver = data.get("waiver")
    if isinstance(waiver, dict) and isinstance(waiver.get("file"), str):
        data["waiver"] = {**waiver, "file": machine_path(waiver["file"])}
    return data


def verdict_data(verdict: Verdict) -> dict[str, Any]:
    """The verdict as plain data, for `check --format json` and the `check` key of `plan --format json`."""
    return {
        "verdict": "fail" if verdict.failed else "pass",
        "fail_level": verdict.fail_level,
        "summary": {level: verdict.count(level) for level in ("error", "warning", "info")}
        | {"waived": len(verdict.waived), "rules": len(verdict.rules_run)},
        "findings": [finding_data(f) for f in verdict.findings],
        "waived": [finding_data(f) for f in verdict.waived],
    }


def render(verdict: Verdict) -> str:
    """One finding a line (json_text), so a hall's thousands of findings are written at C speed."""
    return dumps(verdict_data(verdict), depth=2) + "\n"
