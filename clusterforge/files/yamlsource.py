"""YAML in, plain data plus the line of every key out, so any message can point at the line.

PyYAML's C composer builds the node tree (with marks); we construct plain Python values ourselves so that
YAML 1.1 merge keys (`<<:`) and anchors keep working, duplicate keys become errors instead of
last-one-wins, and each path's line is remembered.

Input is untrusted: the file must be a regular file within limits.INPUT_BYTES, its nesting and its size once
aliases are expanded are bounded (clusterforge.files.yamlguard) before anything is built, only YAML's standard scalar
tags are read, and `!include` reads only .yaml/.yml files inside the include root (the folder of the file the
user named, or CLUSTERFORGE_INCLUDE_ROOT), never echoing an included file's text in a message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.core.source import PathKey as PathKey
from clusterforge.core.source import Source as Source
from clusterforge.core.source import format_path as format_path
from clusterforge.files.yamlguard import FORBIDDEN, check_graph, check_text, describe
from clusterforge.files.yamlguard import read_text as read_text

try:  # the C loader is ~10x faster; fall back when libyaml is missing
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS = frozenset(_YAML + t for t in ("str", "int", "float", "bool", "null", "timestamp"))
_AS_TEXT = frozenset({_YAML + "merge", _YAML + "value"})  # `<<` and `=` outside a key: just text
_INCLUDE = "!include"
_INCLUDE_SUFFIXES = (".yaml", ".yml")
_NAME_MAX = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_INCLUDE_DEPTH = 8  # files including files
INCLUDE_ROOT = "CLUSTERFORGE_INCLUDE_ROOT"


@dataclass
class _Load:
    """What one load shares with the files it includes: where includes may come from, and what is spent."""

    top: str  # the file the user named: includes stay in its folder unless CLUSTERFORGE_INCLUDE_ROOT says else
    nodes_left: int
    includes: int = 0
    _root: Path | None = None
    # each included file is read and parsed once per load: resolved path -> (source, values, depth, includes it made)
    parsed: dict[str, tuple[Source, int, int, int]] = field(default_factory=dict)

    def root(self) -> Path:
        if self._root is None:
            raw = os.environ.get(INCLUDE_ROOT, "")
            base = raw or os.path.dirname(self.top) or "."
            try:
                resolved = Path(os.path.realpath(base, strict=True))
            except (OSError, RuntimeError, ValueError):
                resolved = None
            if resolved is None or not resolved.is_dir():
                raise ClusterforgeError(Problem(f"the include root {shown(base, 120)} is not a folder",
                                                INCLUDE_ROOT if raw else self.top))
            self._root = resolved
        return self._root


class _Builder:
    """Turns a composed node tree into plain data while recording lines and rejecting duplicate keys.

    `echo` is false inside included files: their messages never quote their content."""

    def __init__(self, file: str, chain: tuple[str, ...], load: _Load, depth: int) -> None:
        self.file = file
        self.chain = (*chain, os.path.realpath(file))
        self.load = load
        self.depth = depth
        self.echo = not chain
        self.lines: dict[PathKey, int] = {}
        self.includes: dict[PathKey, tuple[Source, PathKey]] = {}
        self.constructor = yaml.constructor.SafeConstructor()
        self.pairs: dict[int, list[tuple[str, yaml.Node, yaml.Node]]] = {}  # a mapping's winning pairs, once

    def _shown(self, value: Any) -> str:
        return f" {shown(value)}" if self.echo else ""

    def _fail(self, node: yaml.Node, path: PathKey, message: str, hint: str = "") -> ClusterforgeError:
        return ClusterforgeError(Problem(message, self.file, node.start_mark.line + 1, format_path(path), hint))

    def _include(self, node: yaml.ScalarNode, path: PathKey) -> Any:
        """`!include other.yaml`: the other file's data here, its lines kept for messages about it.

        Only a regular .yaml/.yml file inside the include root, reached by a short relative name, is read."""
        name = str(node.value)
        said = f"!include{self._shown(name)}"
        if len(self.chain) > MAX_INCLUDE_DEPTH:
            raise self._fail(node, path, f"{said}: files include each other more than {MAX_INCLUDE_DEPTH} deep")
        if not name or len(name) > _NAME_MAX or _CONTROL.search(name):
            raise self._fail(node, path, f"{said}: an included file's name must be 1 to {_NAME_MAX} characters "
                                         "without control characters")
        if os.path.isabs(name):
            raise self._fail(node, path, f"{said}: an absolute path", "name the file relative to this one")
        if not name.endswith(_INCLUDE_SUFFIXES):
            raise self._fail(node, path, f"{said}: only .yaml and .yml files can be included")
        root = self.load.root()
        hint = f"includes are read from {root} and below; {INCLUDE_ROOT}=DIR sets another folder"
        try:
            target = Path(os.path.realpath(Path(self.file).parent / name, strict=True))
        except FileNotFoundError:
            raise self._fail(node, path, f"{said}: no such file") from None
        except (OSError, RuntimeError, ValueError) as exc:  # a symbolic link loop, a name too long...
            reason = getattr(exc, "strerror", None) or "cannot be followed"
            raise self._fail(node, path, f"{said}: {reason}") from None
        if not target.is_relative_to(root):
            raise self._fail(node, path, f"{said}: outside the include root", hint)
        if not target.name.endswith(_INCLUDE_SUFFIXES):
            raise self._fail(node, path, f"{said}: a link to a file that is not .yaml or .yml")
        if str(target) in self.chain:
            raise self._fail(node, path, f"{said} includes itself")
        self.load.includes += 1
        if self.load.includes > limits.INCLUDES.value:
            raise ClusterforgeError(limits.INCLUDES.problem(self.load.includes, self.file, node.start_mark.line + 1,
                                                            format_path(path)))
        included = self._parsed(target, self.depth - len(path), node, path)
        data = included.data
        if isinstance(data, dict):  # a shared file may say what it is; those keys are not part of the section
            data = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
        elif not isinstance(data, list):
            raise self._fail(node, path, f"{said}: the file holds a single value; an included file must hold a "
                                         "mapping or a list")
        self.includes[path] = (included, ())
        return data

    def _parsed(self, target: Path, depth: int, node: yaml.Node, path: PathKey) -> Source:
        """The included file parsed once per load (its own lines kept: messages point into it); each further
        use still spends its values and its own includes from the load's budgets, as the data it adds is as
        large again. A use nested deeper than the first has fewer levels left, so it is parsed again to check
        them."""
        cached = self.load.parsed.get(str(target))
        if cached is None or depth < cached[2]:
            before, includes = self.load.nodes_left, self.load.includes
            source = _parse(read_text(target, follow=False), str(target), self.chain, self.load, depth)
            self.load.parsed[str(target)] = (source, before - self.load.nodes_left, depth,
                                             self.load.includes - includes)
            return source
        source, values, _, includes = cached
        self.load.includes += includes
        if self.load.includes > limits.INCLUDES.value:
            raise ClusterforgeError(limits.INCLUDES.problem(self.load.includes, self.file, node.start_mark.line + 1,
                                                            format_path(path)))
        if values > self.load.nodes_left:
            raise ClusterforgeError(limits.YAML_NODES.problem(
                f"more than {limits.YAML_NODES.value:,}", self.file, node.start_mark.line + 1, format_path(path)))
        self.load.nodes_left -= values
        return source

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        self.lines.setdefault(path, node.start_mark.line + 1)
        if node.tag == _INCLUDE:
            if not isinstance(node, yaml.ScalarNode):
                raise self._fail(node, path, "!include takes a file name")
            return self._include(node, path)
        if isinstance(node, yaml.MappingNode):
            if node.tag != _YAML + "map":
                raise self._fail(node, path, f"unsupported tag{self._shown(node.tag)} on a mapping")
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _YAML + "seq":
                raise self._fail(node, path, f"unsupported tag{self._shown(node.tag)} on a list")
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: yaml.Node, path: PathKey) -> Any:
        """A scalar's value by its tag; a value its tag cannot read, or a character YAML forbids, is an error."""
        if node.tag in _AS_TEXT:
            value: Any = str(node.value)
        elif node.tag not in _SCALAR_TAGS:
            raise self._fail(node, path, f"unsupported tag{self._shown(node.tag)}",
                             "only YAML's standard scalar tags and !include are read")
        else:
            try:
                value = self.constructor.construct_object(node)
            except (ValueError, OverflowError, KeyError, IndexError, TypeError, yaml.YAMLError):
                kind = node.tag.removeprefix(_YAML)  # e.g. 2026-13-45 looks like a date but is none
                raise self._fail(node, path, f"invalid {kind} value{self._shown(node.value)}",
                                 "quote it to keep it as text") from None
        if isinstance(value, str) and (bad := FORBIDDEN.search(value)) is not None:
            raise self._fail(node, path, f"text holds the character {describe(ord(bad.group()))}, which YAML "
                                         "does not allow", "remove it; an escape such as \\0 writes one")
        return value

    def _key(self, node: yaml.Node, path: PathKey) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag == _INCLUDE:
            raise self._fail(node, path, "a mapping key must be a plain value")
        value = self._scalar(node, path)
        return value if isinstance(value, str) else str(value)

    def _pairs(self, node: yaml.MappingNode, path: PathKey) -> list[tuple[str, yaml.Node, yaml.Node]]:
        """The mapping's keys after `<<:` merges (explicit keys win; earlier merges win over later ones), worked
        out once per node: an alias builds the same node again, already flattened."""
        known = self.pairs.get(id(node))
        if known is not None:
            return known
        seen: dict[str, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _YAML + "merge":
                continue
            key = self._key(key_node, path)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise self._fail(key_node, (*path, key),
                                 f"duplicate key{self._shown(key)} (first defined on line {seen[key]})",
                                 "remove one of them; YAML keeps only the last")
            seen[key] = line
        try:
            self.constructor.flatten_mapping(node)  # resolves `<<:` merges; explicit keys win
        except yaml.MarkedYAMLError as exc:
            raise _yaml_problem(exc, self.file, echo=self.echo) from None
        winners: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            # merged keys come first; an explicit key later in the list overrides them and alone is built
            winners[self._key(key_node, path)] = (key_node, value_node)
        pairs = [(key, key_node, value_node) for key, (key_node, value_node) in winners.items()]
        self.pairs[id(node)] = pairs
        return pairs

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, key_node, value_node in self._pairs(node, path):
            child = (*path, key)
            self.lines[child] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, child)
        return out


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def _yaml_problem(exc: yaml.YAMLError, file: str, text: str = "", echo: bool = True) -> ClusterforgeError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 0
    if isinstance(exc, yaml.reader.ReaderError):  # bad characters: the reader knows only a position
        line = text[: exc.position].count("\n") + 1 if text else 1
        mark = None
        reason = f"the character {describe(exc.character)} is not allowed ({exc.reason})" \
            if isinstance(exc.character, int) else str(exc.reason)
        context = None
    else:
        reason = getattr(exc, "problem", None) or "cannot parse"
        context = getattr(exc, "context", None)
    if not echo:  # an included file: keep the parser's words, never the file's text it quotes
        reason = _QUOTED.sub("'…'", reason)
        context = _QUOTED.sub("'…'", context) if context else context
    message = f"invalid YAML: {reason}" + (f" ({context})" if context else "")
    hint = ""
    if mark is not None and text:
        lines = text.splitlines()
        if mark.line < len(lines) and lines[mark.line][mark.column:mark.column + 1] == "\t":
            hint = "a tab character: YAML indents with spaces only"
    return ClusterforgeError(Problem(message, file, line, hint=hint))


def parse_text(text: str, file: str = "<input>") -> Source:
    """Parse one YAML document held in `text`; `file` names it in messages and anchors its includes."""
    load = _Load(file, limits.YAML_NODES.value)
    return _parse(text, file, (), load, limits.YAML_DEPTH.value)


def _parse(text: str, file: str, chain: tuple[str, ...], load: _Load, depth: int) -> Source:
    """One file of a load (`chain`: the files including it; `depth`: the levels of nesting left to it)."""
    check_text(text, file, depth, load.nodes_left)
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, file, text, echo=not chain) from None
    if root is None:
        raise ClusterforgeError(Problem("the file is empty; expected a blueprint mapping", file, 1))
    load.nodes_left -= check_graph(root, file, depth, load.nodes_left)
    builder = _Builder(file, chain, load, depth)
    try:
        data = builder.build(root, ())
    except yaml.YAMLError as exc:  # pragma: no cover - values are checked as they are built
        raise _yaml_problem(exc, file, echo=not chain) from None
    return Source(data, file, builder.lines, includes=builder.includes)


def load_file(path: Path, fast: bool = False) -> Source:
    """Read and parse a YAML file; `fast` tries the rapidyaml path first (same result, large files quicker)."""
    text = read_text(path)
    if fast:
        from clusterforge.files.fastyaml import parse_fast

        return parse_fast(text, str(path), parse_text)
    return parse_text(text, str(path))
