"""Deterministic YAML for rendered files: keys in the order built, mappings as blocks, lists inline
(a host's eight rails stay on one line), no line wrapping.

Rendered data is plain (mappings, lists of scalars, strings, numbers), so it is written directly: a 12,500-host
inventory takes a tenth of a second instead of PyYAML's seconds. A string that YAML would read as anything but
that string (yes, 010, a: b, …) is written double-quoted with JSON's escapes, which YAML reads back exactly.
Anything else (nested lists, other types) goes through PyYAML's dumper.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import yaml

try:  # libyaml's emitter is much faster than the pure-Python one
    from yaml import CSafeDumper as _Base
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _Base  # type: ignore[assignment]

_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./@:+()=-]*")
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"


class _Dumper(_Base):
    """Our own subclass, so the list style does not leak into other users of PyYAML's dumpers."""


def _inline_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_Dumper.add_representer(list, _inline_list)


class _Complex(Exception):
    """The data has a shape the direct writer does not handle."""


@lru_cache(maxsize=65536)
def _text(value: str) -> str:
    if yaml.reader.Reader.NON_PRINTABLE.search(value):
        raise _Complex  # control characters: PyYAML's emitter knows how to escape them
    plain = (_PLAIN.fullmatch(value) is not None and not value.endswith(":") and ": " not in value
             and "," not in value and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR)  # type: ignore[no-untyped-call]
    if plain:
        return value
    # JSON's escapes are YAML's, except the characters YAML 1.1 also counts as line breaks
    quoted = json.dumps(value, ensure_ascii=False)
    return quoted.replace("\x85", "\\N").replace("\u2028", "\\L").replace("\u2029", "\\P")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return _complex()
        text = repr(value)  # YAML 1.1 reads an exponent only after a dot: 1e-09 must be 1.0e-09 (as PyYAML writes)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    if isinstance(value, str):
        return _text(value)
    return _complex()


def _complex() -> str:
    raise _Complex


def _write(data: dict[str, Any], indent: str, out: list[str]) -> None:
    for key, value in data.items():
        if not isinstance(key, str):
            raise _Complex
        name = _text(key)
        if isinstance(value, dict):
            if value:
                out.append(f"{indent}{name}:\n")
                _write(value, indent + "  ", out)
            else:
                out.append(f"{indent}{name}: {{}}\n")
        elif isinstance(value, list):
            out.append(f"{indent}{name}: [{', '.join(_scalar(v) for v in value)}]\n")
        else:
            out.append(f"{indent}{name}: {_scalar(value)}\n")


def dump(data: Any) -> str:
    if isinstance(data, dict) and data:
        out: list[str] = []
        try:
            _write(data, "", out)
            return "".join(out)
        except _Complex:
            pass
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=10_000,
                     allow_unicode=True)
