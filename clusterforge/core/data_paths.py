"""Where in the parsed data a pydantic error is: its location (`loc`) as a path into the data.

pydantic's locations name union members and validator steps ('rdhx', 'function-after') besides keys and
indexes; a path keeps only the parts that index into the data, so that Source.locate finds the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_REMEMBERED = 65_536  # prefixes remembered at once: the memo stays small however large the document


def _child(node: Any, part: str | int) -> tuple[bool, Any]:
    """(True, node[part]) when `part` indexes into `node`, else (False, None)."""
    if isinstance(node, dict) and isinstance(part, str) and part in node:
        return True, node[part]
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return True, node[part]
    return False, None


class DataPaths:
    """pydantic error locations as paths into the data, for one validation.problems_from.

    A location keeps only the parts that index into the data (union tags like 'rdhx' or 'function-after' are
    dropped). Each prefix is walked once and remembered: the errors that an alias repeats (two in each of the
    24,000 mappings it stands for) share their parents' walk instead of each walking down from the root."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.known: dict[tuple[str | int, ...], tuple[Any, tuple[str | int, ...]]] = {(): (data, ())}

    def _walk(self, loc: tuple[str | int, ...]) -> tuple[Any, tuple[str | int, ...]]:
        """(the data node that `loc` reaches, the path to it)."""
        known = self.known.get(loc)
        if known is None:
            node, out = self._walk(loc[:-1])
            found, child = _child(node, loc[-1])
            known = (child, (*out, loc[-1])) if found else (node, out)
            if len(self.known) >= _REMEMBERED:
                self.known = {(): (self.data, ())}
            self.known[loc] = known
        return known

    def path(self, loc: Sequence[str | int], missing: bool = False) -> tuple[str | int, ...]:
        """The data path of `loc`; with `missing`, a last part that names no key yet (a missing required key, an
        unknown key taken out) is kept: the path points at its parent and names it."""
        if not loc:
            return ()
        node, out = self._walk(tuple(loc[:-1]))
        last = loc[-1]
        if _child(node, last)[0] or (missing and isinstance(node, dict) and isinstance(last, str)):
            return (*out, last)
        return out
