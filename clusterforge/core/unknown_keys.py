"""Unknown keys past the first thousand, taken out before pydantic sees the data and counted.

pydantic builds an error (and `errors()` a dict) for every unknown key, half a kilobyte each, so the 240,000 that
a few kilobytes of YAML aliases stand for would take hundreds of megabytes to report "... and 239,981 more like
this". One pre-pass along the model keeps the first _KEPT_UNKNOWN for pydantic to report and lists the rest, which
validation.problems_from reports after pydantic's own errors as if pydantic had: the work per problem class is
bounded, not only the output.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, PlainValidator, WrapValidator

Stripped = Sequence[tuple[tuple[str | int, ...], Sequence[str]]]
"""Unknown keys taken out of the data before validation: (path of their mapping, the keys), in pydantic's order."""
_KEPT_UNKNOWN = 1_000  # unknown keys left in the data for pydantic to report; the rest are taken out and counted
_VALIDATORS = (BeforeValidator, PlainValidator, WrapValidator)


def with_stripped(errors: list[Any], stripped: Stripped) -> Iterator[Any]:
    """pydantic's errors, then one extra_forbidden error (as pydantic words it) per unknown key taken out."""
    yield from errors
    for path, keys in stripped:
        for key in keys:
            yield {"type": "extra_forbidden", "loc": (*path, key), "msg": "Extra inputs are not permitted"}


def _shape(annotation: Any) -> tuple[str, Any] | None:
    """How the pre-pass walks a value of this type: ("model", M), ("list", item type), ("dict", value type), or
    None where it cannot tell for sure which model pydantic checks the value with (a union of several models, a
    validator that sees the raw value first, any other type): those values are left to pydantic whole."""
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = get_args(annotation)
        return None if any(isinstance(m, _VALIDATORS) for m in metadata) else _shape(inner)
    if origin in (Union, UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return _shape(members[0]) if len(members) == 1 else None
    if origin is list:
        return "list", get_args(annotation)[0]
    if origin is dict:
        return "dict", get_args(annotation)[1]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and _fields_to_walk(annotation):
        return "model", annotation
    return None


@functools.lru_cache(maxsize=256)
def _fields_to_walk(model: type[BaseModel]) -> tuple[frozenset[str], tuple[tuple[str, Any], ...]] | None:
    """The keys a model allows, and (key, type) of the fields the pre-pass walks into; None for a model whose
    unknown keys it must not judge (extra keys allowed, a root model, a validator that sees the raw mapping, an
    alias other than a plain key)."""
    decorators = model.__pydantic_decorators__
    if (model.model_config.get("extra") != "forbid" or getattr(model, "__pydantic_root_model__", False)
            or any(d.info.mode in ("before", "wrap") for d in decorators.model_validators.values())):
        return None
    raw = {f for d in decorators.field_validators.values() if d.info.mode != "after" for f in d.info.fields}
    by_name = bool(model.model_config.get("populate_by_name") or model.model_config.get("validate_by_name"))
    allowed: set[str] = set()
    fields: list[tuple[str, Any]] = []
    for name, field in model.model_fields.items():
        alias = field.validation_alias if field.validation_alias is not None else field.alias
        if alias is not None and not isinstance(alias, str):
            return None
        key = alias or name
        allowed |= {key, name} if by_name else {key}
        if "*" not in raw and name not in raw and not any(isinstance(m, _VALIDATORS) for m in field.metadata):
            fields.append((key, field.annotation))
    return frozenset(allowed), tuple(fields)


class _Strip:
    """One pre-pass over the data along the model: the first _KEPT_UNKNOWN unknown keys stay for pydantic to
    report; the rest are taken out of a copy (the mappings and lists above them copied, the rest shared) and
    listed, in the order pydantic meets them (a model's fields in their order, then its unknown keys)."""

    def __init__(self) -> None:
        self.kept = 0
        self.stripped: list[tuple[tuple[str | int, ...], list[str]]] = []

    def walk(self, annotation: Any, node: Any, path: tuple[str | int, ...]) -> Any:
        shape = _shape(annotation)
        if shape is None:
            return node
        form, inner = shape
        if form == "model":
            return self.model(inner, node, path)
        if form == "list" and isinstance(node, list):
            items: list[Any] | None = None
            for i, item in enumerate(node):
                new = self.walk(inner, item, (*path, i))
                if new is not item:
                    items = items if items is not None else list(node)
                    items[i] = new
            return node if items is None else items
        if form == "dict" and isinstance(node, dict):
            return self.fields(node, [(key, inner) for key in node if isinstance(key, str)], path)
        return node

    def fields(self, node: dict[Any, Any], fields: Sequence[tuple[str, Any]], path: tuple[str | int, ...]
               ) -> dict[Any, Any]:
        out: dict[Any, Any] | None = None
        for key, annotation in fields:
            if key in node:
                new = self.walk(annotation, node[key], (*path, key))
                if new is not node[key]:
                    out = out if out is not None else dict(node)
                    out[key] = new
        return node if out is None else out

    def model(self, model: type[BaseModel], node: Any, path: tuple[str | int, ...]) -> Any:
        walk = _fields_to_walk(model)
        if walk is None or not isinstance(node, dict):
            return node
        allowed, fields = walk
        out = self.fields(node, fields, path)
        unknown = [key for key in node if isinstance(key, str) and key not in allowed]
        keep = min(len(unknown), max(0, _KEPT_UNKNOWN - self.kept))
        self.kept += keep
        if keep < len(unknown):
            gone = unknown[keep:]
            self.stripped.append((path, gone))
            out = dict(out) if out is node else out
            for key in gone:
                del out[key]
        return out


def strip_unknown(model: type[BaseModel], data: Any) -> tuple[Any, Stripped]:
    """`data` with its unknown keys past the first _KEPT_UNKNOWN taken out, and those keys: pydantic builds an
    error (and errors() a dict) for every unknown key, half a kilobyte each, so the 240,000 that a few kilobytes
    of aliases stand for would take hundreds of megabytes to report "... and 239,981 more like this"."""
    strip = _Strip()
    return strip.model(model, data, ()), strip.stripped
