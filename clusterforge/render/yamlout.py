"""Deterministic YAML for rendered files: keys in the order built, leaf lists inline, no line wrapping."""

from __future__ import annotations

from typing import Any

import yaml

try:  # libyaml's emitter is much faster on a 12,500-host inventory
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=10_000,
                     allow_unicode=True)
