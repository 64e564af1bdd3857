"""Text every format shares: counts in words, and strings made safe for JSON and XML whatever the input."""

from __future__ import annotations

import re
from typing import Any

from clusterforge.errors import one_line


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NOT_XML = re.compile(r"[\ufffe\uffff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_safe(data: Any) -> Any:
    """`data` with every lone surrogate in its strings (a file name that is not UTF-8) written as `\\udcff`,
    so the JSON is valid UTF-8 whatever the input; json.dumps escapes the control characters itself."""
    if isinstance(data, str):
        return _SURROGATE.sub(_escaped, data)
    if isinstance(data, dict):
        return {json_safe(k): json_safe(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [json_safe(v) for v in data]
    return data


def xml_safe(text: str) -> str:
    """`text` on one line with every character XML 1.0 forbids (controls, lone surrogates, U+FFFE/FFFF)
    written out as an escape, so a JUnit reader parses the file whatever the input said."""
    return _NOT_XML.sub(_escaped, one_line(text))
