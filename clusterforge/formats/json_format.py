"""`{"verdict": "pass"|"fail", "findings": [...], "waived": [...]}`."""

from __future__ import annotations

import json
from typing import Any

from clusterforge.formats.escape import json_safe
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
    data = verdict_data(verdict)
    return json.dumps(json_safe(data), indent=2, ensure_ascii=False) + "\n"
