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
import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from clusterforge.yamlsource import PathKey, Source

try:
    import ryml
except ImportError:  # pragma: no cover - the dependency is declared; this keeps a broken install usable
    ryml = None

_TAG = re.compile(r"(?:^|[\s\[{,:-])![^\s=]", re.MULTILINE)  # tags such as !include: PyYAML's job
_JSON_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")
_RESOLVERS = yaml.resolver.Resolver.yaml_implicit_resolvers
_STR = "tag:yaml.org,2002:str"
_PYYAML_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?")


class _Decline(Exception):
    """rapidyaml's reading may differ from PyYAML's (duplicate keys, YAML 1.1 numbers): PyYAML decides."""


@functools.lru_cache(maxsize=4096)  # keys and short values repeat across thousands of racks
def _special_key(text: str) -> bool:
    """A key YAML 1.1 resolves to a non-string (true, 12, null...): PyYAML's key differs from rapidyaml's."""
    return any(tag != _STR and pattern.match(text) for tag, pattern in _RESOLVERS.get(text[:1], ()))


@functools.lru_cache(maxsize=4096)
def _read_differently(text: str) -> bool:
    """Would PyYAML read this plain scalar as something other than the string rapidyaml gave?

    rapidyaml emits a plain scalar that looks like a JSON number, true, false or null as that JSON value, so a
    JSON string of that form was quoted in the YAML and both read it as text. Any other string that one of
    YAML 1.1's implicit resolvers (bool, int, float, null, timestamp, merge, value) claims may have been plain.
    """
    for tag, pattern in _RESOLVERS.get(text[:1], ()):
        if tag != _STR and pattern.match(text):
            return _JSON_LITERAL.fullmatch(text) is None
    return False


def _float(text: str) -> float:
    """A JSON number with a fraction or exponent; YAML 1.1 reads exponents only with a dot and a sign."""
    if ("e" in text or "E" in text) and not _PYYAML_FLOAT.fullmatch(text):
        raise _Decline
    return float(text)


def _plain_everywhere(node: Any) -> bool:
    """True when no key or string value in the data is one PyYAML would resolve differently."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if _special_key(key):
                    return False
                if isinstance(value, str):
                    if value and _read_differently(value):
                        return False
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            for value in item:
                if isinstance(value, str):
                    if value and _read_differently(value):
                        return False
                elif isinstance(value, dict | list):
                    stack.append(value)
    return True


_NEXT_TEXT = re.compile(rb"[^\s:,\]}-]")


_SPECIAL_KEYS = frozenset({"", ".inf", "-.inf", "+.inf", ".nan"})  # rapidyaml renames inf/nan keys, even quoted


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs) or not _SPECIAL_KEYS.isdisjoint(out):  # duplicates, or keys read differently
        raise _Decline
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

    def _scalar_end(self, offset: int, length: int, quoted: bool) -> int:
        """Just past a scalar in the original text; a quoted one ends at its closing quote (in-place parsing
        shortens escaped text, so the parsed length says nothing about the source span)."""
        if not quoted or offset == 0:
            return offset + length
        quote = self._text[offset - 1:offset]
        i = offset
        while i < len(self._text):
            char = self._text[i:i + 1]
            if quote == b'"' and char == b"\\":
                i += 2
                continue
            if char == quote:
                if quote == b"'" and self._text[i + 1:i + 2] == b"'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return offset + length

    def _end(self, node: int) -> int | None:
        """Offset just past the last text of a subtree (an empty value counts by its bracket or quote)."""
        tree = self._tree
        ends = []
        if tree.has_key(node) and (key := self._offset(tree.key(node))) is not None:
            ends.append(self._scalar_end(key, len(tree.key(node)), tree.is_key_quoted(node)))
        if tree.is_container(node) and tree.num_children(node):
            ends += [e for c in ryml.children(tree, node) if (e := self._end(c)) is not None]
        elif tree.has_val(node) and (val := self._offset(tree.val(node))) is not None:
            ends.append(self._scalar_end(val, len(tree.val(node)), tree.is_val_quoted(node)))
        elif (empty := self._empty_offset(node)) is not None:
            ends.append(empty + 2 if self._text[empty:empty + 1] in (b"'", b'"') else empty + 1)  # '' or ""
        return max(ends) if ends else None

    def _search_from(self, node: int) -> int | None:
        """Where the text of a node can begin: after its key, its previous sibling, or its parent's start."""
        tree = self._tree
        if tree.has_key(node) and (key := self._offset(tree.key(node))) is not None:
            return self._scalar_end(key, len(tree.key(node)), tree.is_key_quoted(node))
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
            view = tree.key(child)
            name = bytes(view).decode() if view is not None else ""
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
    if ryml is None or not text.strip() or ("!" in text and _TAG.search(text)):
        return fallback(text, file)
    raw = text.encode("utf-8")
    try:
        with _quiet_stderr():
            tree = ryml.parse_in_arena(raw)
            tree.resolve()
            if not tree.is_map(tree.root_id()):
                return fallback(text, file)
            emitted = ryml.emit_json_malloc(tree, tree.root_id())
        data = json.loads(emitted, object_pairs_hook=_no_duplicates, parse_float=_float)
    except Exception:  # any disagreement or parse error: PyYAML decides and explains
        return fallback(text, file)
    if not _plain_everywhere(data):
        return fallback(text, file)
    return Source(data, file, RymlLines(raw))
