"""Turn pydantic validation errors into located, helpful Problems (line, path, closest valid key)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import islice
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from clusterforge.core.data_paths import DataPaths
from clusterforge.core.errors import ClusterforgeError, Problem, one_line, shown
from clusterforge.core.hints import PER_KIND, and_more, closest
from clusterforge.core.source import Source, format_path
from clusterforge.core.unknown_keys import Stripped, strip_unknown, with_stripped

T = TypeVar("T")

_EXPECTED: dict[str, str] = {}
_PATH_CHARS = 120


def expected(pattern: str, words: str) -> str:
    """Register what a string `pattern` means in words (with an example) and return the words.

    `words` is a noun phrase ("an LNet NID such as 10.0.0.10@o2ib"): the message reads "'x' is not <words>".
    Use it as the description of a constrained string type, so the JSON schema and the error message say the
    same thing: `Annotated[str, StringConstraints(pattern=P), Field(description=expected(P, "…"))]`.
    """
    _EXPECTED[pattern] = words
    return words


def _pattern_message(value: Any, pattern: str) -> str:
    """A string that does not match: the value shown short, then the form expected in words (else the pattern)."""
    words = _EXPECTED.get(pattern)
    return f"{shown(value)} is not {words}" if words else f"{shown(value)} does not match {shown(pattern)}"

_UNITS: dict[str, str] = {}


def figure(unit: str, most: float, least: float = 0, *, inclusive: bool = False) -> Any:
    """A Field for a figure in `unit`: above `least` (or at least it, `inclusive`) and at most `most`. A value
    out of range is reported with its unit: "50,000,000 hosts per device is over the limit of 1,024 hosts per
    device"."""
    description = f"{unit}, at most {most:,}"
    _UNITS[description] = unit
    if inclusive:
        return Field(ge=least, le=most, description=description)
    return Field(gt=least, le=most, description=description)


_BOUND_WORDS = {"less_than_equal": "over the limit of", "less_than": "not under", "greater_than": "not over",
                "greater_than_equal": "under the least of"}
_BOUND_KEY = {"less_than_equal": "le", "less_than": "lt", "greater_than": "gt", "greater_than_equal": "ge"}


def _unit_at(root: type[BaseModel] | None, data: Any, path: Sequence[str | int], steps: Steps | None = None
             ) -> str | None:
    """The unit of the figure at `path`, when its field was declared with figure()."""
    if root is None or not path or not isinstance(path[-1], str):
        return None
    model = _model_at(root, data, path[:-1], steps)
    field = model.model_fields.get(path[-1]) if model is not None else None
    if field is None:
        return None
    descriptions = [field.description, *_inner_descriptions(field.annotation)]
    return next((_UNITS[d] for d in descriptions if d in _UNITS), None)


def _inner_descriptions(annotation: Any) -> list[str]:
    """Descriptions a field's type carries inside a union (`Celsius | None`): pydantic keeps them on the inner
    type, not on the field."""
    found: list[str] = []
    for arg in get_args(annotation):
        found += [m.description for m in getattr(arg, "__metadata__", ()) if getattr(m, "description", None)]
        found += _inner_descriptions(arg)
    return found


def _number(value: float) -> str:
    """80.0 as 80, 1000000 as 1,000,000, 2.5 as 2.5: a bound as the user would write it."""
    return f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:,}"


def _bound_message(kind: str, err: Any, unit: str) -> str:
    value, bound = err.get("input"), err.get("ctx", {}).get(_BOUND_KEY[kind])
    said = _number(value) if isinstance(value, int | float) and not isinstance(value, bool) else _kind_of(value)
    limit = _number(bound) if isinstance(bound, int | float) else str(bound)
    unit = f" {unit}" if unit else ""
    return f"{said}{unit} is {_BOUND_WORDS[kind]} {limit}{unit}"


_TYPE_WORDS = {
    "int_type": "an integer", "int_parsing": "an integer", "float_type": "a number",
    "float_parsing": "a number", "string_type": "a string", "bool_type": "true or false",
    "bool_parsing": "true or false", "list_type": "a list", "dict_type": "a mapping",
    "model_type": "a mapping", "model_attributes_type": "a mapping",
}


def _kind_of(value: Any) -> str:
    """A wrong-typed input in a message: short one-line scalars shown, text and containers by kind and size only
    (a wrong-typed value may be a whole file's contents: a key, a token)."""
    if isinstance(value, str) and (len(value) > 40 or "\n" in value):
        lines = value.count("\n") + 1
        return f"a text of {len(value):,} characters" + (f" on {lines:,} lines" if lines > 1 else "")
    if isinstance(value, dict):
        return f"a mapping of {len(value)} keys"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    return shown(value)


__all__ = ["closest", "expected", "figure", "problems_from", "validate"]  # `closest` lives in clusterforge.core.hints


@functools.lru_cache(maxsize=256)
def _allowed_keys(model: type[BaseModel] | None) -> list[str]:
    """The keys of a model, one list per model: hints.closest remembers its answers per list, so each unknown key
    is searched once however many mappings hold it (callers never change the list)."""
    return list(model.model_fields) if model is not None else []


def _candidates(annotation: Any) -> list[Any]:
    """Flatten Optional/Union/Annotated into the member types."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _candidates(get_args(annotation)[0])
    if origin in (Union, UnionType):
        return [c for arg in get_args(annotation) for c in _candidates(arg)]
    return [annotation]


def _pick_model(annotation: Any, data: Any) -> Any:
    """Choose the union member that matches `data` (by `kind`/`type` tag or by keys)."""
    members = _candidates(annotation)
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    if not models:
        return members[0] if members else None
    if isinstance(data, dict):
        for tag in ("kind", "type"):
            for m in models:
                field = m.model_fields.get(tag)
                if field is not None and data.get(tag) in get_args(field.annotation):
                    return m
        best = max(models, key=lambda m: len(set(data) & set(m.model_fields)))
        return best
    return models[0]


Steps = dict[tuple[int, int, str | int], tuple[Any, Any] | None]
"""Steps of _model_at already taken in one problems_from: (type, data node, part) by identity -> the next."""
_STEPS = 65_536  # steps remembered at once: the memo stays small however large the document


def _step(current: Any, node: Any, part: str | int) -> tuple[Any, Any] | None:
    """One part further down a path: the type that validates it and its data, or None off the models."""
    if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
        field = current.model_fields.get(part)
        if field is None:
            return None
        node = node.get(part) if isinstance(node, dict) else None
        return _pick_model(field.annotation, node), node
    if get_origin(current) is dict and isinstance(part, str):
        node = node.get(part) if isinstance(node, dict) else None
        return _pick_model(get_args(current)[1], node), node
    if isinstance(part, int):
        args = [a for a in get_args(current) if a is not type(None)] if get_origin(current) else []
        inner = next((get_args(a)[0] for a in [current, *args] if get_origin(a) is list), None)
        node = node[part] if isinstance(node, list) and part < len(node) else None
        return (_pick_model(inner, node) if inner is not None else None), node
    return None


def _model_at(root: type[BaseModel], data: Any, path: Sequence[str | int], steps: Steps | None = None
              ) -> type[BaseModel] | None:
    """The pydantic model class that validates the mapping at `path` (best effort, for key suggestions).

    `steps` remembers each step by the identity of its type and data: the errors an alias repeats walk the same
    mappings (a site, its rows, one shared list of feeds), so a hundred thousand of them take a few hundred
    steps, not a hundred thousand walks that pick union members again and again."""
    current: Any = root
    node = data
    for part in path:
        key = (id(current), id(node), part)
        if steps is not None and key in steps:
            step = steps[key]
        else:
            step = _step(current, node, part)
            if steps is not None:
                if len(steps) >= _STEPS:
                    steps.clear()
                steps[key] = step
        if step is None:
            return None
        current, node = step
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def _unknown_key_hint(key: str, allowed: list[str]) -> tuple[str, str | None]:
    """The hint of an unknown key, and the key it suggests (None when it suggests none)."""
    suggestion = closest(key, allowed)
    if suggestion:
        return f"did you mean {suggestion}?", suggestion
    return ("allowed keys: " + ", ".join(allowed) if allowed else ""), None


def problems_from(exc: ValidationError, source: Source, root: type[BaseModel] | None,
                  stripped: Stripped = ()) -> list[Problem]:
    """Translate every pydantic error into a Problem located in `source`, then the unknown keys that
    strip_unknown took out before pydantic saw them (`stripped`), as if pydantic had reported them last.

    Errors that repeat on one line (a value inherited through a YAML merge key by many racks) are reported
    once, with a count; a missing key that an unknown key's 'did you mean' already explains is dropped. At
    most hints.PER_KIND problems of one error type are located and explained; the rest are counted (aliases
    can make a few kilobytes stand for a hundred thousand errors) and reported as one "... and N more" line.

    The work beyond locating an error is done for the problems that are kept only: a repeat is known by its line
    and message, before its hint (a search among the allowed keys, which needs the model at its path) is worked
    out, so one unknown key that an alias repeats a hundred thousand times costs one search. Whether a missing
    key is explained is decided at the end, for the few kept, from the unknown keys seen beside it.
    """
    problems: list[Problem] = []
    index: dict[tuple[int, str], int] = {}
    repeats: dict[int, int] = {}
    suggested: set[tuple[str, str]] = set()
    repeated_keys = False  # an unknown key repeated a problem, so what it suggests was not worked out
    located: dict[str, int] = {}
    left_out: dict[str, tuple[int, int]] = {}  # error type -> (problems left out, the last kept of that type)
    steps: Steps = {}
    paths = DataPaths(source.data)
    errors = exc.errors(include_url=False)
    taken = len(errors) + sum(len(keys) for _, keys in stripped)
    looked_at = taken  # unknown keys after this error were left out (PER_KIND located)
    for n, err in enumerate(with_stripped(errors, stripped)):
        kind = err["type"]
        if located.get(kind, 0) >= PER_KIND:
            count, last = left_out.get(kind, (0, 0))
            if kind == "extra_forbidden" and n >= len(errors):  # the rest are unknown keys taken out: counted
                left_out[kind] = (count + taken - n, last)
                break
            left_out[kind] = (count + 1, last)
            continue
        path, message, hint = _said(err, source, root, steps, paths)
        file, line = source.locate(path)
        where = (line, message)
        if where in index:
            repeats[index[where]] = repeats.get(index[where], 0) + 1
            repeated_keys = repeated_keys or kind == "extra_forbidden"
            continue
        if kind == "union_tag_invalid":
            suggestion = closest(str(err.get("ctx", {}).get("tag")), _tags(err))
            hint = f"did you mean {suggestion}?" if suggestion else ""
        elif kind == "extra_forbidden":
            key = str(path[-1]) if path else "?"
            allowed = _allowed_keys(_model_at(root, source.data, path[:-1], steps)) if root else []
            hint, suggestion = _unknown_key_hint(key, allowed)
            if suggestion:
                suggested.add((format_path(path[:-1]), suggestion))
        problem = Problem(message, file, line, format_path(path), hint)
        if len(problem.path) > _PATH_CHARS:  # a path through a hostile key: keep the message one short line
            problem = replace(problem, path=problem.path[:_PATH_CHARS - 1] + "…")
        located[kind] = located.get(kind, 0) + 1
        if kind == "extra_forbidden" and located[kind] == PER_KIND:
            looked_at = n + 1
        left_out[kind] = (0, len(problems))
        index[where] = len(problems)
        problems.append(problem)
    more = {last: count for count, last in left_out.values() if count}
    if repeated_keys:
        suggested |= _suggested_by_repeats(problems, suggested, islice(with_stripped(errors, stripped), looked_at),
                                           source, root, steps, paths)
    return _counted(problems, repeats, more, suggested)


def _counted(problems: list[Problem], repeats: dict[int, int], more: dict[int, int],
             suggested: set[tuple[str, str]]) -> list[Problem]:
    """The kept problems as reported: each with the count of the places that repeat it, a missing key that an
    unknown key's suggestion explains left out, and an "... and N more" line after the last kept of a kind."""
    out = []
    for i, problem in enumerate(problems):
        parent, _, name = problem.path.rpartition(".")
        explained = problem.message.startswith("missing required key ") and (parent, name) in suggested
        if i in repeats:
            problem = replace(problem, message=f"{problem.message} (and {repeats[i]} more places that use this line)")
        if not explained:
            out.append(problem)
        if i in more:
            out.append(replace(problem, message=and_more(problems[i].message, more[i]), hint=""))
    return out


def _tags(err: Any) -> list[str]:
    """The tags a discriminated union expected."""
    return [t.strip(" '") for t in str(err.get("ctx", {}).get("expected_tags", "")).split(",")]


def _said(err: Any, source: Source, root: type[BaseModel] | None, steps: Steps,
          paths: DataPaths) -> tuple[tuple[Any, ...], str, str]:
    """Where in the data one pydantic error is, and its message and hint in the blueprint's words."""
    kind = err["type"]
    path = paths.path(err["loc"], kind in ("missing", "extra_forbidden"))
    hint = ""
    if kind == "union_tag_invalid":
        ctx = err.get("ctx", {})
        key = str(ctx.get("discriminator", "kind")).strip("'")
        path = (*path, key)
        message = f"unknown {key} {shown(ctx.get('tag'))}; expected one of {', '.join(_tags(err))}"
    elif kind == "extra_forbidden":
        message = f"unknown key {shown(str(path[-1]) if path else '?')}"
    elif kind == "missing":
        message = f"missing required key {err['loc'][-1]!r}"
    elif kind == "string_pattern_mismatch":
        message = _pattern_message(err.get("input"), str(err.get("ctx", {}).get("pattern", "")))
        if err["loc"] and err["loc"][-1] == "[key]":
            message = f"key {message}"
    elif kind == "finite_number":
        message = f"expected a finite number, got {shown(err.get('input'))}"
        hint = "infinity and NaN are not values a limit or a figure can take"
    elif kind in _BOUND_WORDS and (unit := _unit_at(root, source.data, path, steps)) is not None:
        message = _bound_message(kind, err, unit)
    elif kind in _TYPE_WORDS:
        message = f"expected {_TYPE_WORDS[kind]}, got {_kind_of(err.get('input'))}"
    else:
        message = one_line(err["msg"].removeprefix("Value error, "))
    return path, message, hint


def _suggested_by_repeats(problems: list[Problem], suggested: set[tuple[str, str]], errors: Iterable[Any],
                          source: Source, root: type[BaseModel] | None, steps: Steps,
                          paths: DataPaths) -> set[tuple[str, str]]:
    """What the unknown keys that repeated an earlier problem suggest (their hints were not worked out), in the
    mappings where a kept missing key is not explained yet: a second pass over the errors, for those few only."""
    missing = [problem.path.rpartition(".") for problem in problems
               if problem.message.startswith("missing required key ")]
    wanted = {parent for parent, _, name in missing if (parent, name) not in suggested}
    found: set[tuple[str, str]] = set()
    for err in errors if wanted else ():
        if err["type"] == "extra_forbidden":
            path = paths.path(err["loc"], True)
            parent = format_path(path[:-1])
            if path and parent in wanted:
                allowed = _allowed_keys(_model_at(root, source.data, path[:-1], steps)) if root else []
                suggestion = _unknown_key_hint(str(path[-1]), allowed)[1]
                if suggestion:
                    found.add((parent, suggestion))
    return found


def validate(model: type[T] | TypeAdapter[T], source: Source, root: type[BaseModel] | None = None) -> T:
    """Validate `source.data` against a model, raising one ClusterforgeError with every located problem.

    The unknown keys of a model past the first _KEPT_UNKNOWN are taken out before pydantic sees the data and
    reported after its errors (strip_unknown), so thousands of them cost a count each, not an error each."""
    adapter = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    if root is None and isinstance(model, type) and issubclass(model, BaseModel):
        root = model
    data: Any = source.data
    stripped: Stripped = ()
    if isinstance(model, type) and issubclass(model, BaseModel):
        data, stripped = strip_unknown(model, data)
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise ClusterforgeError(problems_from(exc, source, root, stripped)) from None
