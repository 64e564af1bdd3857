"""JSON Schema of the blueprint, for editors (VS Code's YAML extension) and external checks."""

from __future__ import annotations

from typing import Any

from clusterforge import __version__
from clusterforge.targets import blueprint_model, registered


def blueprint_schema() -> dict[str, Any]:
    schema = blueprint_model().model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://clusterforge.dev/schema/v1/cluster-{__version__}.json"
    schema["properties"]["target"]["enum"] = sorted(registered())
    schema["$defs"]["Pool"]["properties"]["target"]["anyOf"][0]["enum"] = sorted(registered())
    schema["title"] = "clusterforge Cluster blueprint (clusterforge/v1)"
    return schema
