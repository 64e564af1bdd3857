"""Deterministic YAML for rendered files: keys in the order built, mappings as blocks, lists inline
(a host's eight rails stay on one line), no line wrapping."""

from __future__ import annotations

from typing import Any

import yaml

try:  # libyaml's emitter is much faster on a 12,500-host inventory
    from yaml import CSafeDumper as _Base
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _Base  # type: ignore[assignment]


class _Dumper(_Base):
    """Our own subclass, so the list style does not leak into other users of PyYAML's dumpers."""


def _inline_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_Dumper.add_representer(list, _inline_list)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=10_000,
                     allow_unicode=True)
