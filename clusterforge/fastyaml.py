"""The fast path for large blueprints: rapidyaml parses, JSON carries the data into Python in bulk, and the
line of a path is looked up in the parse tree only when a message needs it.

It yields exactly what the PyYAML path yields or declines: a document that uses YAML 1.1 scalars that the
two resolve differently (yes/on/off, octal, exponents, dates, tags...), duplicate keys, or anything either
parser objects to goes through PyYAML, which gives the reference data and error messages.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from clusterforge.yamlsource import PathKey, Source

try:
    import ryml
except ImportError:  # pragma: no cover - the dependency is declared; this keeps a broken install usable
    ryml = None

_VALUE = r"(?:[\[{,][ \t]*|:[ \t]+|^[ \t]*(?:-[ \t]+)+|\?[ \t]+)"
_KEY = r"(?:^[ \t]*(?:-[ \t]+)*|[\[{,][ \t]*)"
_END = r"(?=[ \t]*(?:$|[,\]}#]))"
_RISKY_TOKENS = [  # whole plain scalars that YAML 1.1 (PyYAML) and rapidyaml's JSON would read differently
    r"(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF|True|TRUE|False|FALSE|Null|NULL|~)",
    r"[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)",
    r"\+[0-9.][0-9a-zA-Z_.:+-]*",               # an explicit plus sign
    r"-?0[0-9bBoOxX_][0-9a-fA-F_.:xXoObB]*",     # octal, hex, binary, leading zeros
    r"-?[0-9][0-9_]*_[0-9_.]*",                  # digit separators
    r"-?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?",  # sexagesimal
    r"-?[0-9]*\.[0-9.]*\.[0-9.]*",               # several dots: a float PyYAML cannot build
    r"-?[0-9]+\.",                               # a trailing dot
    r"-?\.[0-9]+",                               # a leading dot
    r"-?[0-9.]+[eE][-+]?[0-9]+",                 # exponents (YAML 1.1 needs a dot and a sign)
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[^,\]}#\n]*",  # timestamps
    r"=",                                         # the YAML 1.1 value key
]
_TOKENS = "(?:" + "|".join(_RISKY_TOKENS) + ")"
_RISKY = re.compile(f"{_VALUE}(?:{_TOKENS}{_END}|!)|{_KEY}{_TOKENS}[ \\t]*:(?:\\s|$)", re.MULTILINE)


_NEXT_TEXT = re.compile(rb"[^\s:,\]}-]")


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate
    return out


class _PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("suboffsets", ctypes.c_void_p), ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]


def _address(view: Any) -> int:
    """Start address of a buffer (rapidyaml hands out read-only views into the parsed text)."""
    info = _PyBuffer()
    if _get_buffer(view, ctypes.byref(info), 0) != 0:  # pragma: no cover - CPython always supports it
        raise RuntimeError("buffer protocol failed")
    try:
        return int(info.buf or 0)
    finally:
        _release_buffer(ctypes.byref(info))


class RymlLines:
    """`path -> line` on demand from the unresolved parse tree (merge keys followed to their anchors)."""

    def __init__(self, text: bytes) -> None:
        self._text = text  # the original: in-place parsing rewrites escaped and folded scalars in _buffer
        self._buffer = bytearray(text)
        self._tree = ryml.parse_in_place(self._buffer)
        self._base = _address(self._buffer)
        self._newlines: list[int] | None = None
        self._anchors: dict[str, int] | None = None
        self._cache: dict[PathKey, int] = {}

    def _line_at(self, offset: int) -> int:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer(b"\n", self._text)]
        return bisect.bisect_left(self._newlines, offset) + 1

    def _offset(self, view: Any) -> int | None:
        return _address(view) - self._base if view is not None and len(view) else None

    def _node_offset(self, node: int) -> int | None:
        """Where a node starts: its key, else its anchor or first child (a list item), else its value."""
        tree = self._tree
        if tree.has_key(node):
            return self._offset(tree.key(node))
        offsets = []
        if tree.has_val_anchor(node):
            offsets.append(self._offset(tree.val_anchor(node)))
        if tree.is_container(node):
            offsets += [self._node_offset(c) for c in ryml.children(tree, node)]
        elif tree.has_val(node):
            offsets.append(self._offset(tree.val(node)))
        found = [o for o in offsets if o is not None]
        if not found:
            return self._empty_offset(node)
        first = min(found)
        if tree.is_container(node) and tree.is_flow(node):  # a flow collection starts at its bracket
            bracket = self._text.rfind(b"[" if tree.is_seq(node) else b"{", 0, first)
            return bracket if bracket >= 0 else first
        return first

    def _end(self, node: int) -> int | None:
        """Offset just past the last text of a subtree (an empty value counts by its bracket or quote)."""
        tree = self._tree
        ends = []
        if tree.has_key(node) and (key := self._offset(tree.key(node))) is not None:
            ends.append(key + len(tree.key(node)) + (1 if tree.is_key_quoted(node) else 0))
        if tree.is_container(node) and tree.num_children(node):
            ends += [e for c in ryml.children(tree, node) if (e := self._end(c)) is not None]
        elif tree.has_val(node) and (val := self._offset(tree.val(node))) is not None:
            ends.append(val + len(tree.val(node)) + (1 if tree.is_val_quoted(node) else 0))
        elif (empty := self._empty_offset(node)) is not None:
            ends.append(empty + 2 if self._text[empty:empty + 1] in (b"'", b'"') else empty + 1)  # '' or ""
        return max(ends) if ends else None

    def _search_from(self, node: int) -> int | None:
        """Where the text of a node can begin: after its key, its previous sibling, or its parent's start."""
        tree = self._tree
        if tree.has_key(node) and (key := self._offset(tree.key(node))) is not None:
            return key + len(tree.key(node)) + (1 if tree.is_key_quoted(node) else 0)
        before = tree.prev_sibling(node)
        if before != ryml.NONE:
            return self._end(before)
        if not tree.has_parent(node):
            return 0
        parent = tree.parent(node)
        start = self._search_from(parent)
        if start is not None and tree.is_flow(parent):  # the first item of a flow collection follows its bracket
            bracket = self._text.find(b"[" if tree.is_seq(parent) else b"{", start)
            return bracket + 1 if bracket >= 0 else start
        return start

    def _empty_offset(self, node: int) -> int | None:
        """An empty scalar, `[]` or `{}` has no text of its own to point at: take the first thing after what
        precedes it (its key, the previous sibling or the parent's key), past separators and item dashes."""
        tree = self._tree
        if tree.is_container(node) and tree.num_children(node):
            return None
        start = self._search_from(node)
        if start is None:
            return None
        match = _NEXT_TEXT.search(self._text, start)
        return match.start() if match else None

    def _anchor(self, name: str) -> int | None:
        if self._anchors is None:
            tree, anchors = self._tree, {}
            stack = [tree.root_id()]
            while stack:
                node = stack.pop()
                if tree.has_val_anchor(node):
                    anchors[bytes(tree.val_anchor(node)).decode()] = node
                stack.extend(ryml.children(tree, node))
            self._anchors = anchors
        return self._anchors.get(name)

    def _find_key(self, node: int, key: str, depth: int = 0) -> int | None:
        tree = self._tree
        if not tree.is_map(node) or depth > 20:
            return None
        found: int | None = None
        merges: list[int] = []
        for child in ryml.children(tree, node):
            name = bytes(tree.key(child)).decode()
            if name == key:
                found = int(child)  # the last explicit one wins, as in PyYAML
            elif name == "<<":
                merges.append(child)
        if found is not None:
            return found
        for merge in merges:
            refs = list(ryml.children(tree, merge)) if tree.is_seq(merge) else [merge]
            for ref in refs:
                if tree.is_val_ref(ref):
                    target = self._anchor(bytes(tree.val_ref(ref)).decode())
                    if target is not None and (hit := self._find_key(target, key, depth + 1)) is not None:
                        return hit
        return None

    def _resolve(self, node: int) -> int:
        """Follow an alias (`*name`) to its anchor."""
        tree = self._tree
        if tree.is_val_ref(node):
            target = self._anchor(bytes(tree.val_ref(node)).decode())
            if target is not None:
                return target
        return node

    def get(self, path: PathKey, /) -> int | None:
        if path in self._cache:
            return self._cache[path]
        tree = self._tree
        node = tree.root_id()
        root = self._node_offset(node)
        line: int | None = self._line_at(root) if root is not None else 1
        for part in path:
            node = self._resolve(node)
            if isinstance(part, str):
                child = self._find_key(node, part)
            else:
                child = tree.child(node, part) if tree.is_seq(node) and part < tree.num_children(node) else None
            if child is None:
                return None
            node = child
            # a list item's line is where its node starts; an alias item starts at its anchor, as in PyYAML
            offset = self._node_offset(self._resolve(node) if isinstance(part, int) else node)
            line = self._line_at(offset) if offset is not None else line
        self._cache[path] = line or 1
        return line


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """rapidyaml prints its parse errors on file descriptor 2; a declined document goes to PyYAML instead."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def parse_fast(text: str, file: str, fallback: Callable[[str, str], Source]) -> Source:
    """Parse with rapidyaml when the document is safe for it; otherwise hand it to `fallback` (PyYAML)."""
    if ryml is None or not text.strip() or _RISKY.search(text):
        return fallback(text, file)
    raw = text.encode("utf-8")
    try:
        with _quiet_stderr():
            tree = ryml.parse_in_arena(raw)
        tree.resolve()
        if not tree.is_map(tree.root_id()):
            return fallback(text, file)
        data = json.loads(ryml.emit_json_malloc(tree, tree.root_id()), object_pairs_hook=_no_duplicates)
    except Exception:  # any disagreement or parse error: PyYAML decides and explains
        return fallback(text, file)
    return Source(data, file, RymlLines(raw))
