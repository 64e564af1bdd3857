"""JSON text for reports of many results: indented at the top, one line per result below, in C speed.

`json.dumps(indent=2)` runs the pure-Python encoder: 4,000 findings took longer to write than to check. Here
the outer levels are laid out by hand and everything from `depth` down is written by the C encoder on one
line, so a report stays readable (one finding or SARIF result a line) and valid JSON. Strings keep every
character; a lone surrogate (a file name that is not UTF-8) is written as the text `\\udcff`, as
escape.json_safe writes it, so the output is valid UTF-8 whatever the input.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # one encoder: json.dumps with options builds one per call


def _escaped(match: re.Match[str]) -> str:
    return f"\\\\u{ord(match.group()):04x}"  # inside a JSON string: a backslash, then `u` and four digits


def _layout(data: Any, depth: int, level: int) -> str:
    if level >= depth or not isinstance(data, dict | list | tuple) or not data:
        return _ENCODER.encode(data)
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(data, dict):
        items = [f"{inner}{_ENCODER.encode(str(key))}: {_layout(value, depth, level + 1)}"
                 for key, value in data.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    return "[\n" + ",\n".join(inner + _layout(value, depth, level + 1) for value in data) + f"\n{pad}]"


def dumps(data: Any, depth: int) -> str:
    """`data` as JSON: levels above `depth` indented by two spaces, each value at `depth` on one line."""
    return _SURROGATE.sub(_escaped, _layout(data, depth, 0))
