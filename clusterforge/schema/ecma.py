"""The models' patterns as every reader of the editor schema compiles them.

The models' patterns are written for pydantic's engine and Python's `re` (clusterforge/core/text.py). JSON Schema's
`pattern` is an ECMA-262 regular expression, and its readers compile it differently: yaml-language-server (VS
Code's YAML extension, every editor's `yamlls`) with `new RegExp(pattern, 'u')`, falling back to no flag when that
throws; check-jsonschema with regress in the same `u` mode, where a pattern that does not compile makes the schema
itself invalid ("is not a 'regex'"); Python's jsonschema with `re`. Python's `\\U0001d173` is no ECMA-262 escape:
with `u` it does not compile, and without it `\\U` is the letter U, so a class that refuses format characters
would refuse U, 0, 1 and every digit in between, and a waiver's `reason:` would be red in the editor.

The patterns are therefore rewritten into what all three read alike: a code point beyond the BMP becomes the
character itself (a `u` pattern and `re` both read it as one code point; JSON carries it as an escaped surrogate
pair, so the file stays ASCII), punctuation escaped for `re` only becomes `\\xNN`/`\\uNNNN`, and a stray brace or
bracket is escaped. What has no common reading (`\\d`, `\\w`, `\\s` are Unicode in `re` and ASCII in ECMA-262;
inline flags, `\\A`, `\\Z`, named groups, backreferences) is refused here, so the schema never quietly says less
or more than the model: a model must spell such a pattern out.
"""

from __future__ import annotations

import re
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem

_SYNTAX = frozenset("^$\\.*+?()[]{}|/")  # ECMA-262 `u` mode escapes only these (and `-` in a class)
_CONTROL = frozenset("fnrtv")  # \f \n \r \t \v: the same character in both
_HEX = {"x": 2, "u": 4, "U": 8}
_GROUPS = ("(?:", "(?=", "(?!", "(?<=", "(?<!")
_QUANTIFIER = re.compile(r"\{([0-9]*)(?:(,)([0-9]*))?\}")
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "title", "description", "pattern"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})


class Untranslatable(ValueError):
    """A construct of the pattern that reads differently in ECMA-262 and has no spelling both read alike."""


def _char(code: int) -> str:
    """A code point written so a `u`-mode ECMA-262 regex and `re` read the same one character."""
    return f"\\u{code:04x}" if code < 0x10000 else chr(code)


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at `pattern[i]` (a backslash) rewritten, and where the next token starts."""
    letter = pattern[i + 1: i + 2]
    if letter in _HEX:
        digits = pattern[i + 2: i + 2 + _HEX[letter]]
        if len(digits) != _HEX[letter] or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise Untranslatable(f"\\{letter}{digits}")
        code = int(digits, 16)
        return (f"\\x{digits}" if letter == "x" else _char(code)), i + 2 + _HEX[letter]
    if letter in _SYNTAX or letter in _CONTROL or (in_class and letter == "-"):
        return f"\\{letter}", i + 2
    if letter and not letter.isalnum() and letter != "_":
        return _char(ord(letter)), i + 2  # `re` takes any punctuation escaped; ECMA-262 `u` mode does not
    raise Untranslatable(f"\\{letter}")


def _class_start(pattern: str, i: int) -> tuple[str, int]:
    """`[` or `[^`, with a `]` right after it (a literal in `re`, an empty class in ECMA-262) escaped."""
    start = "[^" if pattern.startswith("[^", i) else "["
    i += len(start)
    if pattern.startswith("]", i):
        return start + "\\]", i + 1
    return start, i


def _brace(pattern: str, i: int) -> tuple[str, int]:
    """A `{` outside a class: a quantifier as ECMA-262 spells it, or a literal brace."""
    match = _QUANTIFIER.match(pattern, i)
    if match is None or (not match.group(1) and not match.group(2)):
        return "\\{", i + 1
    least, comma, most = match.groups()
    return f"{{{least or 0}{comma or ''}{most or ''}}}", match.end()  # `re`'s {,3} is {0,3}


def ecma_pattern(pattern: str) -> str:
    """`pattern` (Python `re` syntax) as a pattern that ECMA-262 with `u` and `re` both read as `re` did."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            text, i = _escape(pattern, i, in_class)
            out.append(text)
            continue
        if in_class:
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            text, i = _class_start(pattern, i)
            out.append(text)
            in_class = True
            continue
        elif char == "{":
            text, i = _brace(pattern, i)
            out.append(text)
            continue
        elif char in "}]":
            out.append("\\" + char)
        elif char == "(" and pattern.startswith("(?", i):
            group = next((g for g in _GROUPS if pattern.startswith(g, i)), None)
            if group is None:
                raise Untranslatable(pattern[i: i + 4])
            out.append(group)
            i += len(group)
            continue
        else:
            out.append(_char(ord(char)) if ord(char) >= 0x10000 else char)
        i += 1
    return "".join(out)


def _translated(pattern: str, where: str) -> str:
    try:
        return ecma_pattern(pattern)
    except Untranslatable as error:
        raise ClusterforgeError(Problem(
            f"the pattern {pattern[:80]!r} has {error} in it, which editors (ECMA-262) read otherwise than "
            "clusterforge: spell it with explicit classes", path=where)) from None


def ecma_patterns(node: Any, where: str = "#") -> None:
    """Rewrite in place every `pattern` and `patternProperties` key of a schema for its ECMA-262 readers.

    Values (`const`, `enum`, `default`, `examples`) and words are data, left as they are; the members of
    `properties`, `$defs` and the like are schemas, whatever their names."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            ecma_patterns(item, f"{where}/{index}")
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("pattern"), str):
        node["pattern"] = _translated(node["pattern"], f"{where}/pattern")
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict):
        node["patternProperties"] = {_translated(key, f"{where}/patternProperties"): value
                                     for key, value in patterns.items()}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, member in value.items():
                ecma_patterns(member, f"{where}/{key}/{name}")
        elif key not in _DATA_KEYWORDS:
            ecma_patterns(value, f"{where}/{key}")
