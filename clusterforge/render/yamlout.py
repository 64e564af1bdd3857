"""Deterministic YAML for rendered files: keys in the order built, mappings as blocks, lists of scalars inline
(a host's eight rails stay on one line), lists of mappings as block sequences, no line wrapping.

Rendered data is plain (mappings, lists of scalars, strings, numbers), so it is written directly: a 12,500-host
inventory takes a tenth of a second instead of PyYAML's seconds. A string that YAML would read as anything but
that string (yes, 010, a: b, …) is written double-quoted with JSON's escapes, which YAML reads back exactly.
Anything else (nested lists, mixed lists, other types) goes through PyYAML's dumper.

Ansible evaluates `{{ }}`, `{% %}` and `{# #}` in every string of an inventory or vars file, and the strings
here come from untrusted blueprints, catalogs and stack outputs. `dump_ansible` therefore writes every string
with Ansible's `!unsafe` tag (Ansible reads it as that text and never evaluates it), except a `Template`: a
value clusterforge itself writes as a template on purpose. A string YAML would read as a number, boolean, null
or date is written quoted without the tag: Ansible resolves an `!unsafe` scalar as if it were plain (`!unsafe
'22.05'` would become the float 22.05), and no such string can hold template syntax.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem, shown

try:  # libyaml's emitter and parser are much faster than the pure-Python ones
    from yaml import CSafeDumper as _Base
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _Base  # type: ignore[assignment]
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./@:+()=-]*")
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"
UNSAFE = "!unsafe"
_TEMPLATE_START = ("{{", "{%", "{#")


class Template(str):
    """A string clusterforge writes as an Ansible template on purpose (`"{{ inventory_dir }}/../slurm"`)."""


class _Unsafe(str):
    """A string the PyYAML fallback writes with the `!unsafe` tag."""


class _Dumper(_Base):
    """Our own subclass, so the list style does not leak into other users of PyYAML's dumpers."""


def _inline_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


def _plain_str(dumper: _Dumper, data: str) -> yaml.Node:
    return dumper.represent_str(str(data))


def _unsafe(dumper: _Dumper, data: str) -> yaml.Node:
    return dumper.represent_scalar(UNSAFE, str(data))


_Dumper.add_representer(list, _inline_list)
_Dumper.add_representer(Template, _plain_str)
_Dumper.add_representer(_Unsafe, _unsafe)


class _Loader(_BaseLoader):
    """Reads what `dump_ansible` wrote: `!unsafe` strings as plain strings."""


def _construct_unsafe(loader: _Loader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    raise yaml.constructor.ConstructorError(None, None, "!unsafe on a collection", node.start_mark)


_Loader.add_constructor(UNSAFE, _construct_unsafe)


def load(text: str) -> Any:
    """A rendered inventory or vars file as data (the `!unsafe` tags dropped): for clusterforge's own reading."""
    return yaml.load(text, Loader=_Loader)  # a SafeLoader with one more string constructor


class _Complex(Exception):
    """The data has a shape the direct writer does not handle."""


@lru_cache(maxsize=65536)
def _text(value: str) -> str:
    if yaml.reader.Reader.NON_PRINTABLE.search(value):
        raise _Complex  # control characters: PyYAML's emitter knows how to escape them
    plain = (_PLAIN.fullmatch(value) is not None and not value.endswith(":") and ": " not in value
             and "," not in value and _is_str(value))
    if plain:
        return value
    # JSON's escapes are YAML's, except the characters YAML 1.1 also counts as line breaks
    quoted = json.dumps(value, ensure_ascii=False)
    return quoted.replace("\x85", "\\N").replace("\u2028", "\\L").replace("\u2029", "\\P")


def _is_str(value: str) -> bool:
    """Whether YAML reads `value` written plain as a string (not a number, boolean, null, date, `=` or `<<`)."""
    return bool(_RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR)  # type: ignore[no-untyped-call]


def _needs_tag(value: str) -> bool:
    """Whether `value` is written `!unsafe` by dump_ansible: every string but a Template and the non-strings."""
    return not isinstance(value, Template) and _reads_as_str(value)


@lru_cache(maxsize=65536)
def _reads_as_str(value: str) -> bool:
    # YAML's resolvers never match a brace; the second test keeps that an invariant rather than an assumption
    return _is_str(value) or any(start in value for start in _TEMPLATE_START)


def _scalar(value: Any, unsafe: bool = False) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return _complex()
        text = repr(value)  # YAML 1.1 reads an exponent only after a dot: 1e-09 must be 1.0e-09 (as PyYAML writes)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    if isinstance(value, str):
        text = _text(value)
        return f"{UNSAFE} {text}" if unsafe and _needs_tag(value) else text
    return _complex()


def _complex() -> str:
    raise _Complex


def _write(data: dict[str, Any], indent: str, out: list[str], unsafe: bool) -> None:
    for key, value in data.items():
        if not isinstance(key, str):
            raise _Complex
        name = _text(key)
        if isinstance(value, dict):
            if value:
                out.append(f"{indent}{name}:\n")
                _write(value, indent + "  ", out, unsafe)
            else:
                out.append(f"{indent}{name}: {{}}\n")
        elif isinstance(value, list) and value and all(isinstance(v, dict) and v for v in value):
            out.append(f"{indent}{name}:\n")
            for item in value:  # a block sequence of mappings: `- first: ...` then the other keys below it
                lines: list[str] = []
                _write(item, indent + "  ", lines, unsafe)
                out.append(f"{indent}- {lines[0][len(indent) + 2:]}")
                out.extend(lines[1:])
        elif isinstance(value, list):
            out.append(f"{indent}{name}: [{', '.join(_scalar(v, unsafe) for v in value)}]\n")
        else:
            out.append(f"{indent}{name}: {_scalar(value, unsafe)}\n")


def _tagged(data: Any) -> Any:
    """`data` with every string to be tagged wrapped as _Unsafe, for the PyYAML fallback (keys stay as they are)."""
    if isinstance(data, dict):
        return {key: _tagged(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_tagged(value) for value in data]
    if isinstance(data, str) and _needs_tag(data):
        return _Unsafe(data)
    return data


def _check_keys(data: Any) -> None:
    """Keys are names clusterforge chose from validated fields; one holding template syntax is refused."""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and any(start in key for start in _TEMPLATE_START):
                raise ClusterforgeError(Problem(f"the name {shown(key)} cannot be written to an Ansible file",
                                                hint="names hold letters, digits and dashes"))
            _check_keys(value)
    elif isinstance(data, list):
        for value in data:
            _check_keys(value)


def _dump(data: Any, unsafe: bool) -> str:
    if isinstance(data, dict) and data:
        out: list[str] = []
        try:
            _write(data, "", out, unsafe)
            return "".join(out)
        except _Complex:
            pass
    return yaml.dump(_tagged(data) if unsafe else data, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     width=10_000, allow_unicode=True)


def dump(data: Any) -> str:
    """YAML for a consumer that evaluates nothing (the Pulumi stack config)."""
    return _dump(data, unsafe=False)


def dump_ansible(data: Any) -> str:
    """YAML for Ansible: every string `!unsafe` except a `Template` (see the module's docstring)."""
    _check_keys(data)
    return _dump(data, unsafe=True)
