"""Bounds on what one YAML file may cost before and while it is parsed: its size and kind, its nesting depth and
its number of values once aliases are expanded.

The text checks run before libyaml or rapidyaml see the document: a cheap, conservative bound over the bytes
(brackets, line indentation, separators) accepts every ordinary file in a few milliseconds; only a document that
might go over a bound is walked exactly, with libyaml's event parser (iterative: no recursion, nothing built),
which stops at the first event past the bound.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem

try:  # the C parser is ~10x faster; fall back when libyaml is missing
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# Characters YAML does not allow in a document (an escape such as "\0" or "\ud800" can still write them)
FORBIDDEN = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_OPEN_CLOSE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_PREFIX = bytes.maketrans(b"\t?:-", b"    ")  # a line's indentation and its block indicators, as spaces
_NOT_SEPARATOR = bytes(b for b in range(256) if b not in b":?[{-,")


def describe(code: int) -> str:
    """A forbidden character named by its code point, never echoed."""
    return f"U+{code:04X}"


def read_text(path: Path, *, follow: bool = True) -> str:
    """Read a UTF-8 file that is a regular file within limits.INPUT_BYTES; anything else is an input problem.

    The kind is checked by stat before opening (a FIFO opened for reading blocks, a device may never end), then
    again on the open descriptor, and the read itself stops one byte past the limit.
    """
    name = str(path)
    limit = limits.INPUT_BYTES.value
    try:
        info = os.stat(path, follow_symlinks=follow)
        _check_kind(info, name, limit)
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else os.O_NOFOLLOW)
        fd = os.open(path, flags)
        try:
            _check_kind(os.fstat(fd), name, limit)
            chunks, size = [], 0
            while size <= limit:
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise ClusterforgeError(Problem("no such file", name)) from None
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read: {exc.strerror}", name)) from None
    if size > limit:
        raise ClusterforgeError(limits.INPUT_BYTES.problem(f"more than {limit:,}", name))
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ClusterforgeError(Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", name, line)) from None


def _check_kind(info: os.stat_result, name: str, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise ClusterforgeError(Problem("is a directory, expected a YAML file", name))
    if not stat.S_ISREG(info.st_mode):
        raise ClusterforgeError(Problem("not a regular file (a device, pipe or socket), expected a YAML file", name))
    if info.st_size > limit:
        raise ClusterforgeError(limits.INPUT_BYTES.problem(info.st_size, name))


def _flow_bound(raw: bytes, stop: int) -> int:
    """At least the deepest bracket nesting anywhere in the text (quoted, commented or not); at most `stop` + 1
    passes: each pass removes the innermost `[]` pairs, so the passes count the matched depth."""
    brackets = raw.translate(_OPEN_CLOSE, _NOT_BRACKET)
    passes = 0
    while b"[]" in brackets and passes <= stop:
        brackets = brackets.replace(b"[]", b"")
        passes += 1
    return passes + brackets.count(b"[")


def _block_fits(raw: bytes, budget: int) -> bool:
    """Whether block nesting stays within `budget` levels, judged by indentation alone.

    A block collection is indented past its parent, or is a sequence at its mapping's indentation whose items
    are indented again, so a line whose indentation and indicators (`- `, `? `, `: `) span c columns sits
    at most 2c + 3 levels deep."""
    columns = (budget - 3) // 2 + 1  # the first width that could go over
    if columns <= 0:
        return False
    mapped = raw.translate(_PREFIX)
    indent = b" " * columns
    return not mapped.startswith(indent) and b"\n" + indent not in mapped


def check_text(text: str, file: str, depth: int | None = None, nodes: int | None = None) -> None:
    """Refuse a document nested deeper than `depth` levels or holding more than `nodes` values, before it is
    parsed (aliases count once here; their expansion is bounded on the composed graph)."""
    depth = limits.YAML_DEPTH.value if depth is None else depth
    nodes = limits.YAML_NODES.value if nodes is None else nodes
    raw = text.encode("utf-8", "surrogatepass")
    flow = _flow_bound(raw, depth)
    nodes_bound = 1 + 3 * len(raw.translate(None, _NOT_SEPARATOR))
    if flow <= depth and _block_fits(raw, depth - flow) and nodes_bound <= nodes:
        return
    _exact(text, file, depth, nodes)


def _exact(text: str, file: str, depth: int, nodes: int) -> None:
    """Walk libyaml's events: open collections and values, stopping at the first one past a bound. A syntax
    error ends the walk quietly: the parse proper reports it, and stops at the same place."""
    level = count = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            line = event.start_mark.line + 1 if event.start_mark is not None else 0
            if isinstance(event, yaml.CollectionStartEvent):
                level += 1
                count += 1
                if level > depth:
                    raise ClusterforgeError(limits.YAML_DEPTH.problem(
                        f"at least {level:,}", file, line))
            elif isinstance(event, yaml.CollectionEndEvent):
                level -= 1
            elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
                count += 1
            if count > nodes:
                raise ClusterforgeError(limits.YAML_NODES.problem(
                    f"more than {nodes:,}", file, line))
    except yaml.YAMLError:
        return


def check_graph(root: yaml.Node, file: str, depth: int, nodes: int) -> int:
    """The number of values `root` stands for once every alias and merge is expanded, counted over the composed
    graph with each node visited once (so a billion-value alias bomb costs as much as its few hundred nodes).

    Refuses more than `nodes` values, more than `depth` levels once expanded, and an alias inside the node it
    names (a cycle, which expansion would never finish)."""
    done: dict[int, tuple[int, int]] = {}  # id(node) -> (values, levels) once expanded
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_.discard(key)
            size, levels = 1, 0
            for child in _children(node):
                child_size, child_levels = done[id(child)]
                size += child_size
                levels = max(levels, child_levels + 1)
            line = node.start_mark.line + 1
            if size > nodes:
                raise ClusterforgeError(limits.YAML_NODES.problem(size, file, line))
            if levels > depth:
                raise ClusterforgeError(limits.YAML_DEPTH.problem(levels, file, line))
            done[key] = (size, levels)
            continue
        if key in done:
            continue
        if key in open_:
            raise ClusterforgeError(Problem("an alias refers to the collection that contains it (a recursive "
                                            "structure)", file, node.start_mark.line + 1,
                                            hint="YAML data here must be a tree"))
        open_.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) not in done:
                stack.append((child, False))
    return done[id(root)][0]


def _children(node: yaml.Node) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
