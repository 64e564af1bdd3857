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

from clusterforge.core.source import PathKey, Source
from clusterforge.files.yamlguard import check_text

try:
    import ryml
except ImportError:  # pragma: no cover - the dependency is declared; this keeps a broken install usable
    ryml = None

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


def _plain_list(items: list[Any]) -> None:
    """Decline when a string in the list (or a list nested in it) is one PyYAML would resolve differently;
    mappings in it were checked by `_no_duplicates` when JSON built them."""
    for value in items:
        if value.__class__ is str:
            if value and _read_differently(value):
                raise _Decline
        elif value.__class__ is list:
            _plain_list(value)


_NEXT_TEXT = re.compile(rb"[^\s:,\]}-]")
_EMPTY_AFTER_KEY = re.compile(rb"[ ]*:?[ ]*(['\"\[{])")
_QUOTE_AFTER_DASH = re.compile(rb"-[ ]+(['\"])")
_NESTED_DASH = re.compile(rb"-[ ]+-(?=[ \n])")


_SPECIAL_KEYS = frozenset({"", ".inf", "-.inf", "+.inf", ".nan"})  # rapidyaml renames inf/nan keys, even quoted


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build one JSON object, declining duplicate keys and any key or string value that PyYAML would read as
    something else (checked here, while JSON builds the data, rather than in a second walk over it)."""
    out = dict(pairs)
    if len(out) != len(pairs) or not _SPECIAL_KEYS.isdisjoint(out):  # duplicates, or keys read differently
        raise _Decline
    for key, value in pairs:
        if _special_key(key):
            raise _Decline
        if value.__class__ is str:
            if value and _read_differently(value):
                raise _Decline
        elif value.__class__ is list:
            _plain_list(value)
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
    """`path -> line` on demand from the parse tree (documents with anchors or merge keys never come here)."""

    def __init__(self, text: bytes, buffer: bytearray | None = None, tree: Any = None) -> None:
        """`buffer` and `tree`: the in-place parse of `text` that the data came from, kept rather than parsed
        again (one tree in memory, not two)."""
        self._text = text  # the original: in-place parsing rewrites escaped and folded scalars in _buffer
        self._buffer = buffer if buffer is not None else bytearray(text)
        self._tree = tree if tree is not None else ryml.parse_in_place(self._buffer)
        self._base = _address(self._buffer)
        self._newlines: list[int] | None = None
        self._cache: dict[PathKey, int] = {}
        self._kids: dict[int, list[int]] = {}
        self._keys: dict[int, dict[str, int]] = {}
        self._root_line: int | None = None

    def _line_at(self, offset: int) -> int:
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer(b"\n", self._text)]
        return bisect.bisect_left(self._newlines, offset) + 1

    def _offset(self, view: Any) -> int | None:
        return _address(view) - self._base if view is not None and len(view) else None

    def _node_offset(self, node: int) -> int | None:
        """Where a node starts: its key, else its first child with text (a list item), else its value."""
        tree = self._tree
        if tree.has_key(node):
            return self._offset(tree.key(node))
        first: int | None = None
        if tree.is_container(node):
            child = tree.first_child(node)
            while child != ryml.NONE and (first := self._node_offset(child)) is None:
                child = tree.next_sibling(child)
        elif tree.has_val(node):
            first = self._offset(tree.val(node))
        if first is None:
            return self._empty_offset(node)
        if tree.is_container(node) and tree.is_flow(node):  # a flow collection starts at its bracket
            bracket = self._text.rfind(b"[" if tree.is_seq(node) else b"{", 0, first)
            if bracket >= 0 and not self._text[bracket + 1:first].strip(b" \n\"'"):  # `a: b` in a list has no brace
                return bracket
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
            ends += [e for c in self._children(node) if (e := self._end(c)) is not None]
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
        if tree.has_key(node):  # `key:` then nothing, '' or "" or [] or {} on the same line
            value = _EMPTY_AFTER_KEY.match(self._text, start)
            return value.start(1) if value else None
        parent = tree.parent(node) if tree.has_parent(node) else ryml.NONE
        if not tree.is_container(node) and parent != ryml.NONE and tree.is_seq(parent) and not tree.is_flow(parent):
            dash = self._text.find(b"-", start)  # an empty item of a block list: PyYAML points at its dash
            if dash < 0:
                return None
            while (inner := _NESTED_DASH.match(self._text, dash)) is not None:  # `- - ''`: the innermost is its own
                dash = inner.end() - 1
            quoted = _QUOTE_AFTER_DASH.match(self._text, dash)  # `- ''`: the quotes are the item's text
            return quoted.start(1) if quoted else dash
        match = _NEXT_TEXT.search(self._text, start)
        return match.start() if match else None

    def _children(self, node: int) -> list[int]:
        """A node's children in order, listed once (rapidyaml reaches the i-th child by walking its siblings)."""
        kids = self._kids.get(node)
        if kids is None:
            kids = self._kids[node] = list(ryml.children(self._tree, node))
        return kids

    def _find_key(self, node: int, key: str) -> int | None:
        tree = self._tree
        if not tree.is_map(node):
            return None
        keys = self._keys.get(node)
        if keys is None:  # each key's node, listed once per mapping (keys are unique on this path)
            keys = self._keys[node] = {bytes(tree.key(c)).decode(): c for c in self._children(node)}
        return keys.get(key)

    def get(self, path: PathKey, /) -> int | None:
        """The line of `path`, in time proportional to its length once each mapping and list on it is listed."""
        if path in self._cache:
            return self._cache[path]
        tree = self._tree
        node = tree.root_id()
        if self._root_line is None:
            root = self._node_offset(node)
            self._root_line = self._line_at(root) if root is not None else 1
        line: int | None = self._root_line
        nodes = []
        for part in path:
            if isinstance(part, str):
                child = self._find_key(node, part)
            else:
                kids = self._children(node) if tree.is_seq(node) else []
                child = kids[part] if 0 <= part < len(kids) else None
            if child is None:
                return None
            node = child
            nodes.append(node)
        for node in reversed(nodes):  # the deepest node on the path with text of its own gives the line
            offset = self._node_offset(node)
            if offset is not None:
                line = self._line_at(offset)
                break
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


_ANYWHERE = ("<<", "\\", "\t", "\r", "\ufeff")  # merges, escapes, tabs, other line breaks, byte order marks
_AT_NODE = "&*!@`%?"  # anchors, aliases, tags, reserved indicators, directives, explicit keys
_UNUSUAL = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_ASCII_TEXT = bytes(range(0x20, 0x7F)) + b"\n"
# rapidyaml writes `-.5` and `+.5` into JSON as -0.5 and 0.5, numbers, where PyYAML's YAML 1.1 float has no
# sign before a bare dot and reads them as text; a block scalar as a list item is placed a line lower.
_SIGNED_DOT = re.compile(r"[-+]\.[0-9]")
_BLOCK_ITEM = re.compile(r"^[ ]*(?:-[ ]+)+[|>]", re.MULTILINE)
_BLOCK_ITEM_HINT = re.compile(r"-[ ]+[|>]")  # what every _BLOCK_ITEM match holds: 30 times cheaper to look for



def _may_start_a_node(text: str, char: str) -> bool:
    """Whether `char` appears anywhere but inside a word (where it cannot be an indicator)."""
    at = text.find(char)
    for _ in range(256):  # past that many, stop looking: PyYAML takes the document
        if at < 0:
            return False
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            return True
        at = text.find(char, at + 1)
    return True


def _declined(text: str, raw: bytes) -> bool:
    """Whether the document holds anything the fast path leaves to PyYAML: anchors and aliases (their expansion
    is bounded on PyYAML's graph), merge keys, tags and includes, escapes (which can write characters YAML
    forbids), reserved indicators, tabs, line breaks other than \\n, characters outside printable text, a text
    without a final line break, a sign before a bare dot (`-.5`) and a block scalar as a list item."""
    if any(token in text for token in _ANYWHERE):
        return True
    if not text.endswith("\n") or _SIGNED_DOT.search(text) or (
            _BLOCK_ITEM_HINT.search(text) and _BLOCK_ITEM.search(text)):
        return True  # a block scalar at the end of a file without a final line break keeps rapidyaml's one
    if any(_may_start_a_node(text, char) for char in _AT_NODE if char in text):
        return True
    if text.isascii():
        return bool(raw.translate(None, _ASCII_TEXT))
    return _UNUSUAL.search(text) is not None


def parse_fast(text: str, file: str, fallback: Callable[[str, str], Source]) -> Source:
    """Parse with rapidyaml when the document is safe for it; otherwise hand it to `fallback` (PyYAML).

    The bounds on depth and size apply before either parser sees the text (the PyYAML path checks them itself,
    so a declined document is scanned once); rapidyaml never sees an alias (so never expands one) and its tree
    is never resolved."""
    raw = text.encode("utf-8")
    if ryml is None or not text.strip() or _declined(text, raw):
        return fallback(text, file)
    check_text(text, file)
    try:
        with _quiet_stderr():
            buffer = bytearray(raw)
            tree = ryml.parse_in_place(buffer)
            if not tree.is_map(tree.root_id()):
                return fallback(text, file)
            emitted = ryml.emit_json_malloc(tree, tree.root_id())
        data = json.loads(emitted, object_pairs_hook=_no_duplicates, parse_float=_float)
        del emitted
    except Exception:  # any disagreement or parse error: PyYAML decides and explains
        return fallback(text, file)
    return Source(data, file, RymlLines(raw, buffer, tree))
