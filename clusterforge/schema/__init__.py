"""JSON Schema of the files users write, for editors (VS Code's YAML extension) and external checks.

One schema for every kind, picked by the file's `kind:` (document.py): each kind's model gives the shape after
loading (kinds.py), widened to what the loader reads before expansion (written.py): name ranges and `count:`
groups, feeds without names, `!include FILE`.
"""

from __future__ import annotations

from typing import Any

from clusterforge.schema.document import editor_schema


def blueprint_schema() -> dict[str, Any]:
    """The editor schema (every kind, blueprints included), as `clusterforge schema` prints it."""
    return editor_schema()


__all__ = ["blueprint_schema", "editor_schema"]
