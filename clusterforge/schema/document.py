"""The one editor schema: each kind's definition, picked by the file's `kind:`.

`kind: Cluster` and `kind: Site` are required in those files; policy configs, waivers and catalogs may leave
`kind` out (their models default it), so a file without one is held against those three.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic.json_schema import models_json_schema

from clusterforge.core.version import __version__
from clusterforge.schema.ecma import ecma_patterns
from clusterforge.schema.hardware import hardware_names
from clusterforge.schema.kinds import kind_models, kind_optional
from clusterforge.schema.written import as_written

if TYPE_CHECKING:
    from clusterforge.catalog import Catalog

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _targets(defs: dict[str, Any], cluster: str) -> None:
    """`target:` names a registered target package (found at run time, so not in the model's type)."""
    from clusterforge.target_kernel import registered

    names = sorted(registered())
    defs[cluster]["properties"]["target"]["enum"] = names
    defs["Pool"]["properties"]["target"]["anyOf"][0]["enum"] = names


def editor_schema(catalog: Catalog | None = None) -> dict[str, Any]:
    """One JSON Schema for blueprints, site files, policy configs, waivers and catalogs, as written, with
    patterns every editor compiles as clusterforge does, and the hardware names of `catalog` (default: the
    built-in one) for pools and fabrics."""
    from clusterforge.target_kernel import load_catalog

    models = kind_models()
    keys, top = models_json_schema([(model, "validation") for model in models.values()],
                                   ref_template="#/$defs/{model}")
    defs: dict[str, Any] = top["$defs"]
    refs = {kind: keys[(model, "validation")]["$ref"] for kind, model in models.items()}
    _targets(defs, refs["Cluster"].rsplit("/", 1)[-1])
    as_written(defs)
    hardware_names(defs, catalog if catalog is not None else load_catalog())
    by_kind: list[dict[str, Any]] = [
        {"if": {"required": ["kind"], "properties": {"kind": {"const": kind}}}, "then": {"$ref": ref}}
        for kind, ref in refs.items()]
    optional = [{"$ref": refs[kind]} for kind, model in models.items() if kind_optional(model)]
    by_kind.append({"if": {"not": {"required": ["kind"]}}, "then": {"anyOf": optional}})
    schema = {
        "$schema": SCHEMA_DIALECT,
        "$id": f"https://clusterforge.dev/schema/v1/clusterforge-{__version__}.json",
        "title": "clusterforge files (clusterforge/v1)",
        "description": f"A file clusterforge reads, by its kind: {', '.join(models)}. Blueprints (kind: Cluster) "
                       "and site files (kind: Site) say their kind; a file without one is a policy config, "
                       "waivers or a catalog.",
        "type": "object",
        "properties": {"kind": {"enum": list(models), "description": "what the file is"}},
        "allOf": by_kind,
        "$defs": defs,
    }
    ecma_patterns(schema)  # the models' patterns are Python's; an editor compiles ECMA-262 (ecma.py)
    return schema
