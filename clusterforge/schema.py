"""JSON Schema of the blueprint, for editors (VS Code's YAML extension) and external checks."""

from __future__ import annotations

from typing import Any

from clusterforge import __version__
from clusterforge.model import Cluster
from clusterforge.targets import registered


def blueprint_schema() -> dict[str, Any]:
    schema = Cluster.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://clusterforge.dev/schema/v1/cluster-{__version__}.json"
    schema["properties"]["target"]["enum"] = sorted(registered())
    schema["title"] = "clusterforge Cluster blueprint (clusterforge/v1)"
    return schema
