"""Read a policy config file (`--policy-config`): its shape, then each rule section against that rule's settings."""

from __future__ import annotations

from pathlib import Path

from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.validation import validate
from clusterforge.files.yamlsource import load_file
from clusterforge.policies.config import PolicyConfig
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.registry import REGISTRY, settings_problems


def load_policy_config(path: Path | None) -> PolicyConfig:
    """Read a policy config file; rule sections are validated against each rule's settings by the registry."""
    if path is None:
        return PolicyConfig()
    source = load_file(path)
    config = validate(PolicyConfig, source)
    load_rules()
    problems = settings_problems(config, source, REGISTRY)
    if problems:
        raise ClusterforgeError(problems)
    return config
