"""The `clusterforge-blueprint` stack policy: the whole rule set over the blueprint the stack was built from.

Resource policies see only what Pulumi creates; power, cooling, fabric sizing and the checkpoint window
live in the blueprint, so the pack also runs `evaluate()` on it and blocks on every unwaived error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError
from clusterforge.pipeline.analysis import PolicyInputs, analyze, read_policy

CONFIG_KEYS: dict[str, str] = {
    "blueprint": "Blueprint YAML the stack is built from (relative paths: from the policy pack directory).",
    "catalogs": "Optional list of site catalog YAML files (hardware and software sets), as `check --catalog`.",
    "policyConfig": "Optional policy config YAML (thresholds and levels per rule), as `check --policy-config`.",
    "waivers": "Optional waiver file YAML, as `check --waivers`.",
}


def _path(value: Any, base: Path) -> Path | None:
    if not isinstance(value, str) or not value:
        return None
    return Path(os.path.normpath(base / value))  # absolute values stay as they are


def _paths(value: Any, base: Path) -> tuple[Path, ...]:
    items = value if isinstance(value, list) else [value]
    return tuple(p for p in (_path(item, base) for item in items) if p is not None)


def blueprint_violations(config: Mapping[str, Any], base: Path) -> list[str]:
    """`file:line: ID: message` for every unwaived error finding; nothing when no blueprint is configured.
    The verdict comes from the same pipeline as `clusterforge check` with the same files."""
    blueprint = _path(config.get("blueprint"), base)
    if blueprint is None:
        return []
    inputs = PolicyInputs(_paths(config.get("catalogs"), base), _path(config.get("policyConfig"), base),
                          _path(config.get("waivers"), base))
    try:
        verdict = analyze(blueprint, read_policy(inputs)).verdict
    except ClusterforgeError as error:
        return [problem.render() for problem in error.problems]
    return [finding.render() for finding in verdict.errors]
