"""JSON Schema of the files users write, for editors (VS Code's YAML extension) and external checks.

One schema for every kind, picked by the file's `kind:` (document.py): each kind's model gives the shape after
loading (kinds.py), widened to what the loader reads before expansion (written.py): name ranges and `count:`
groups, feeds without names, `!include FILE`; the catalog's hardware names for a pool's `hardware:` and a fabric's
`switch:` (hardware.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clusterforge.schema.document import editor_schema

if TYPE_CHECKING:
    from clusterforge.catalog import Catalog


def blueprint_schema(catalog: Catalog | None = None) -> dict[str, Any]:
    """The editor schema (every kind, blueprints included), as `clusterforge schema` prints it: with the hardware
    names of `catalog`, the built-in one by default (`--catalog` adds a site's)."""
    return editor_schema(catalog)


__all__ = ["blueprint_schema", "editor_schema"]
