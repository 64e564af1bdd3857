"""The `clusterforge-blueprint` stack policy: the whole rule set over the blueprint the stack was built from.

Resource policies see only what Pulumi creates; power, cooling, fabric sizing and the checkpoint window
live in the blueprint, so the pack also runs `evaluate()` on it and blocks on every unwaived error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterforge.errors import ClusterforgeError
from clusterforge.load import load_blueprint
from clusterforge.policies import evaluate, load_policy_config, load_waivers

CONFIG_KEYS: dict[str, str] = {
    "blueprint": "Blueprint YAML the stack is built from (relative paths: from the policy pack directory).",
    "policyConfig": "Optional policy config YAML (thresholds and levels per rule), as `check --policy-config`.",
    "waivers": "Optional waiver file YAML, as `check --waivers`.",
}


def _path(value: Any, base: Path) -> Path | None:
    if not isinstance(value, str) or not value:
        return None
    return Path(os.path.normpath(base / value))  # absolute values stay as they are


def blueprint_violations(config: Mapping[str, Any], base: Path) -> list[str]:
    """`file:line: ID: message` for every unwaived error finding; nothing when no blueprint is configured."""
    blueprint = _path(config.get("blueprint"), base)
    if blueprint is None:
        return []
    try:
        loaded = load_blueprint(blueprint)
        settings = load_policy_config(_path(config.get("policyConfig"), base))
        waivers = load_waivers(_path(config.get("waivers"), base))
    except ClusterforgeError as error:
        return [problem.render() for problem in error.problems]
    verdict = evaluate(loaded, config=settings, waivers=waivers)
    return [finding.render() for finding in verdict.errors]
