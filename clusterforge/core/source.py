"""A parsed document and the line of each of its paths: what every message is located with."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from clusterforge.core.errors import Problem

PathKey = tuple[str | int, ...]


def format_path(path: Iterable[str | int]) -> str:
    """Render ('site', 'rows', 0, 'racks', 2) as `site.rows[0].racks[2]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


class LineIndex(Protocol):
    """Where each key or list item stands: a dict filled while parsing, or a lazy lookup."""

    def get(self, path: PathKey, /) -> int | None: ...


@dataclass
class Source:
    """A loaded document: its data, where it came from, and the line of each key and list item."""

    data: Any
    file: str
    lines: LineIndex = field(default_factory=lambda: dict[PathKey, int]())
    aliases: dict[PathKey, PathKey] = field(default_factory=dict)  # expanded entry -> the group that wrote it
    includes: dict[PathKey, tuple[Source, PathKey]] = field(default_factory=dict)  # subtree -> another file

    def _written(self, path: PathKey) -> PathKey:
        """The path as written in the file: an expanded group member maps to its group."""
        for cut in range(len(path), 0, -1):
            target = self.aliases.get(path[:cut])
            if target is not None:
                return target + path[cut:]
        return path

    def locate(self, path: Sequence[str | int]) -> tuple[str, int]:
        """(file, line) of `path`: the deepest existing prefix, followed into included files."""
        key = self._written(tuple(path)) if self.aliases else tuple(path)
        if self.includes:
            for cut in range(len(key), -1, -1):
                inner = self.includes.get(key[:cut])
                if inner is not None:
                    other, base = inner
                    return other.locate(base + key[cut:])
        while key:
            line = self.lines.get(key)
            if line is not None:
                return self.file, line
            key = key[:-1]
        return self.file, self.lines.get(()) or 0

    def line_of(self, path: Sequence[str | int]) -> int:
        """Line of the deepest prefix of `path` that exists in the document (1-based; 0 if unknown)."""
        return self.locate(path)[1]

    def problem(self, path: Sequence[str | int], message: str, hint: str = "") -> Problem:
        """A Problem located at `path` in this document (or the file it included there)."""
        file, line = self.locate(path)
        return Problem(message, file, line, format_path(path), hint)
