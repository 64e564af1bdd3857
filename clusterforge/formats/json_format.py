"""`{"verdict": "pass"|"fail", "findings": [...], "waived": [...]}`."""

from __future__ import annotations

from typing import Any

from clusterforge.formats.json_text import dumps
from clusterforge.policies import Verdict


def verdict_data(verdict: Verdict) -> dict[str, Any]:
    """The verdict as plain data, for `check --format json` and the `check` key of `plan --format json`."""
    return {
        "verdict": "fail" if verdict.failed else "pass",
        "fail_level": verdict.fail_level,
        "summary": {level: verdict.count(level) for level in ("error", "warning", "info")}
        | {"waived": len(verdict.waived), "rules": len(verdict.rules_run)},
        "findings": [f.to_json() for f in verdict.findings],
        "waived": [f.to_json() for f in verdict.waived],
    }


def render(verdict: Verdict) -> str:
    """One finding a line (json_text), so a hall's thousands of findings are written at C speed."""
    return dumps(verdict_data(verdict), depth=2) + "\n"
