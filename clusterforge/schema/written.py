"""A kind's model schema widened to the file as written, before the loader expands it.

The models describe data after loading; a user writes less. The loader reads, before any model sees the data:
- rows and racks written as groups (clusterforge/blueprint/expand.py): a name range (`su[01-08]`, `r[000-172]`), or
  `count: N` beside a plain name, and `{row}` in a rack's name for the row it stands in;
- feeds without `name` (the rack names them, model/site.py);
- a catalog server's `psus:` without `required` when it gives `watts` (the server derives it, catalog/models.py);
- a price's `date:` as a year (2025) or a basic-form date (20260925), which YAML reads as numbers (catalog/prices.py);
- `!include FILE` wherever a mapping or a list goes (clusterforge/files/yamlsource.py: an included file holds one or
  the other).
Everything else stays as strict as the model: unknown keys, wrong types and values out of range are refused.
"""

from __future__ import annotations

from typing import Any, get_args

from clusterforge.blueprint.expand import MAX_GROUP
from clusterforge.catalog.prices import IsoDate

INCLUDE = "Include"
_CHAR = r"[A-Za-z0-9._-]"
_RANGE = r"\[[0-9]+-[0-9]+\]"
_ROW = rf"^(?:[A-Za-z0-9]{_CHAR}*(?:{_RANGE}{_CHAR}*)?|{_RANGE}{_CHAR}*)$"
_TOKEN = rf"(?:{_CHAR}|\{{row\}})"
_RACK = rf"^(?:(?:[A-Za-z0-9]|\{{row\}}){_TOKEN}*(?:{_RANGE}{_TOKEN}*)?|{_RANGE}{_TOKEN}*)$"
_INCLUDE_SCHEMA: dict[str, Any] = {
    "type": "string", "pattern": r"^[^/\x00-\x1f\x7f][^\x00-\x1f\x7f]{0,249}\.ya?ml$", "title": "!include",
    "description": "`!include FILE`: a .yaml/.yml file beside this one (or below), holding a mapping or a list; "
                   "map the tag in your editor as `yaml.customTags: [\"!include scalar\"]`"}
_META = ("title", "description", "default", "examples")


def _group(definition: dict[str, Any], pattern: str, what: str) -> None:
    """A row or rack that stands for several: a name range or `count:`, never both."""
    name = definition["properties"]["name"]
    name.pop("pattern", None)
    name["pattern"] = pattern
    name["description"] = (f"the {what}'s name, or a group of {what}s: a range such as a[01-40] (zero padding as "
                           "written)" + (", or with {row} for the row it stands in" if what == "rack" else ""))
    definition["properties"]["count"] = {
        "type": "integer", "minimum": 1, "maximum": MAX_GROUP, "title": "Count",
        "description": f"this many {what}s named <name>01, <name>02, …; not with a name range"}
    definition.setdefault("allOf", []).append(
        {"if": {"required": ["count"]}, "then": {"properties": {"name": {"not": {"pattern": r"\["}}}}})


def _unnamed_feeds(definition: dict[str, Any]) -> None:
    definition["required"] = [k for k in definition.get("required", []) if k != "name"]
    definition["properties"]["name"]["description"] = "default: <rack>-a1, <rack>-b1, … by side"


def _derived_psus(definition: dict[str, Any]) -> None:
    definition["required"] = [k for k in definition.get("required", []) if k != "required"]
    definition.setdefault("allOf", []).append({"if": {"not": {"required": ["watts"]}},
                                               "then": {"required": ["required"]}})


def _iso_dates(defs: dict[str, Any]) -> None:
    """Every `IsoDate` field takes the text the model's pattern describes or the numbers the model turns into it."""
    words = next(m.description for m in get_args(IsoDate)[1:] if isinstance(getattr(m, "description", None), str))
    for definition in defs.values():
        for name, field in definition.get("properties", {}).items():
            if isinstance(field, dict) and field.get("description") == words:
                definition["properties"][name] = {
                    "description": words, "title": field.get("title", name),
                    "anyOf": [{"type": "string", "pattern": r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"},
                              {"type": "integer", "minimum": 1000, "maximum": 9999},
                              {"type": "integer", "minimum": 10000101, "maximum": 99991231}]}


def _key_patterns(node: Any) -> None:
    """A mapping whose keys have one pattern takes no other key (the models' dicts of constrained keys)."""
    if isinstance(node, dict):
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict) and len(patterns) == 1 and "additionalProperties" not in node:
            node.setdefault("propertyNames", {})["pattern"] = next(iter(patterns))
        for value in node.values():
            _key_patterns(value)
    elif isinstance(node, list):
        for value in node:
            _key_patterns(value)


def _container(node: Any, defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    """Whether a value of this schema may be a mapping or a list (so an included file may stand for it)."""
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        return name not in seen and _container(defs.get(name), defs, seen | {name})
    if node.get("type") in ("object", "array"):
        return True
    return any(_container(s, defs, seen) for key in ("anyOf", "oneOf", "allOf") for s in node.get(key, []))


def _includable(node: dict[str, Any]) -> dict[str, Any]:
    include = {"$ref": f"#/$defs/{INCLUDE}"}
    for key in ("anyOf", "oneOf"):
        if key in node:
            node[key].append(include)
            return node
    outer = {k: node.pop(k) for k in _META if k in node}
    return {"anyOf": [node, include], **outer}


def _includes(node: Any, defs: dict[str, Any]) -> None:
    """Every place a value goes that may be a mapping or a list also takes `!include FILE`."""
    if isinstance(node, list):
        for item in node:
            _includes(item, defs)
        return
    if not isinstance(node, dict):
        return
    for key in ("properties", "patternProperties"):
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                _includes(child, defs)
                if _container(child, defs):
                    children[name] = _includable(child)
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, dict):
            _includes(child, defs)
            if _container(child, defs):
                node[key] = _includable(child)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(node.get(key), list):
            _includes(node[key], defs)


def as_written(defs: dict[str, Any]) -> None:
    """Widen the shared definitions in place to the forms the loader reads before expansion."""
    _group(defs["Row"], _ROW, "row")
    _group(defs["Rack"], _RACK, "rack")
    _unnamed_feeds(defs["Feed"])
    _derived_psus(defs["Psus"])
    _iso_dates(defs)
    _key_patterns(defs)
    for definition in list(defs.values()):
        _includes(definition, defs)
    defs[INCLUDE] = dict(_INCLUDE_SCHEMA)
