"""YAML in, plain data plus the line of every key out, so any message can point at the line.

PyYAML's C composer builds the node tree (with marks); we construct plain Python values ourselves so that
YAML 1.1 merge keys (`<<:`) and anchors keep working, duplicate keys become errors instead of
last-one-wins, and each path's line is remembered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from clusterforge.errors import ClusterforgeError, Problem

try:  # the C loader is ~10x faster; fall back when libyaml is missing
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

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


class _Builder:
    """Turns a composed node tree into plain data while recording lines and rejecting duplicate keys."""

    def __init__(self, file: str, chain: tuple[str, ...] = ()) -> None:
        self.file = file
        self.chain = (*chain, file)
        self.lines: dict[PathKey, int] = {}
        self.includes: dict[PathKey, tuple[Source, PathKey]] = {}
        self.constructor = yaml.constructor.SafeConstructor()

    def _include(self, node: yaml.ScalarNode, path: PathKey) -> Any:
        """`!include other.yaml`: the other file's data here, its lines kept for messages about it."""
        target = (Path(self.file).parent / str(node.value)).resolve()
        line = node.start_mark.line + 1
        if str(target) in self.chain or len(self.chain) > 8:
            raise ClusterforgeError(Problem(f"!include {node.value} includes itself", self.file, line,
                                            format_path(path)))
        if not target.is_file():
            raise ClusterforgeError(Problem(f"!include {node.value}: no such file ({target})", self.file, line,
                                            format_path(path)))
        included = parse_text(read_text(target), str(target), self.chain)
        data = included.data
        if isinstance(data, dict):  # a shared file may say what it is; those keys are not part of the section
            data = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
        self.includes[path] = (included, ())
        return data

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode) and node.tag == "!include":
            return self._include(node, path)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        try:
            return self.constructor.construct_object(node)
        except (ValueError, OverflowError) as exc:  # e.g. 2026-13-45 looks like a date but is none
            raise ClusterforgeError(Problem(f"invalid value {node.value!r}: {exc}", self.file,
                                            node.start_mark.line + 1, format_path(path),
                                            "quote it to keep it as text")) from None

    def _key(self, node: yaml.Node, path: PathKey) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise ClusterforgeError(
                Problem("a mapping key must be a plain value", self.file, node.start_mark.line + 1,
                        format_path(path))
            )
        value = self.constructor.construct_object(node)
        return value if isinstance(value, str) else str(value)

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[str, Any]:
        seen: dict[str, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self._key(key_node, path)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ClusterforgeError(
                    Problem(f"duplicate key {key!r} (first defined on line {seen[key]})", self.file, line,
                            format_path((*path, key)), "remove one of them; YAML keeps only the last")
                )
            seen[key] = line
        try:
            self.constructor.flatten_mapping(node)  # resolves `<<:` merges; explicit keys win
        except yaml.MarkedYAMLError as exc:
            raise _yaml_problem(exc, self.file) from None
        winners: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            # merged keys come first; an explicit key later in the list overrides them and alone is built
            winners[self._key(key_node, path)] = (key_node, value_node)
        out: dict[str, Any] = {}
        for key, (key_node, value_node) in winners.items():
            child = (*path, key)
            self.lines[child] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, child)
        return out


def _yaml_problem(exc: yaml.YAMLError, file: str, text: str = "") -> ClusterforgeError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 0
    if isinstance(exc, yaml.reader.ReaderError):  # bad characters: the reader knows only a position
        line = text[: exc.position].count("\n") + 1 if text else 1
        mark = None
    reason = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {reason}" + (f" ({context})" if context else "")
    hint = ""
    if mark is not None and text:
        lines = text.splitlines()
        if mark.line < len(lines) and lines[mark.line][mark.column:mark.column + 1] == "\t":
            hint = "a tab character: YAML indents with spaces only"
    return ClusterforgeError(Problem(message, file, line, hint=hint))


def parse_text(text: str, file: str = "<input>", chain: tuple[str, ...] = ()) -> Source:
    """Parse one YAML document held in `text` (`chain`: the files including this one, against cycles)."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, file, text) from None
    if root is None:
        raise ClusterforgeError(Problem("the file is empty; expected a blueprint mapping", file, 1))
    builder = _Builder(file, chain)
    try:
        data = builder.build(root, ())
    except yaml.YAMLError as exc:  # bad scalar values, e.g. an invalid timestamp
        raise _yaml_problem(exc, file) from None
    return Source(data, file, builder.lines, includes=builder.includes)


def read_text(path: Path) -> str:
    """Read a UTF-8 file, turning OS and encoding errors into input problems."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ClusterforgeError(Problem("no such file", str(path))) from None
    except IsADirectoryError:
        raise ClusterforgeError(Problem("is a directory, expected a YAML file", str(path))) from None
    except UnicodeDecodeError as exc:
        raise ClusterforgeError(Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", str(path))) from None
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read: {exc.strerror}", str(path))) from None


def load_file(path: Path, fast: bool = False) -> Source:
    """Read and parse a YAML file; `fast` tries the rapidyaml path first (same result, large files quicker)."""
    text = read_text(path)
    if fast:
        from clusterforge.fastyaml import parse_fast

        return parse_fast(text, str(path), parse_text)
    return parse_text(text, str(path))
