"""How deep a JSON request nests, found before json.loads (which recurses once per level) parses it: the lab
agent's requests and the BMC emulator's notifications are at most 2 deep, and a hostile one nested 100,000 deep
would exhaust the recursion limit of the thread that parses it."""

from __future__ import annotations

import re

MAX_DEPTH = 8  # the agent's requests are 2 deep (an object holding a list); json.loads recurses per level

_OUTSIDE = re.compile(rb'["\[\]{}]')  # what changes the depth, or starts a string that hides brackets
_STRING_REST = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)  # to a string's closing quote, linear


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether `raw` nests arrays and objects more than `limit` deep, found in one pass without recursing."""
    depth = 0
    at = 0
    while found := _OUTSIDE.search(raw, at):
        if found.group() == b'"':
            rest = _STRING_REST.match(raw, found.end())
            if rest is None:  # a string that never ends: json.loads refuses it without going deeper
                return False
            at = rest.end()
            continue
        depth += 1 if found.group() in b"[{" else -1
        if depth > limit:
            return True
        at = found.end()
    return False
