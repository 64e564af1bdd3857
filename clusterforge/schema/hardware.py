"""The catalog's hardware names in the editor schema: a pool's `hardware:` and a fabric's `switch:` are `enum`s of the
catalog the schema is written with, so the editor completes them and marks a misspelt one at its line.

`validate` accepts exactly the names of the built-in catalog and the files given to it with `--catalog`; the schema
written with the same `--catalog` files (`clusterforge schema --catalog site.yaml`) lists exactly those, so a
blueprint `validate` takes is never marked, and one it refuses for an unknown name is marked in the editor first.
Written without a site's file, the schema marks that site's own hardware: the one case where the two disagree,
and the reason the file is an option of `schema` (docs/editor.md, "Hardware names").

Pools take servers and instance types (which of the two a pool's target takes is `validate`'s to say), fabrics
switches; other kinds of entry (a NIC model, which a server names) are neither.
"""

from __future__ import annotations

from typing import Any

from clusterforge.catalog import Catalog, Instance, Server, Switch
from clusterforge.core.errors import one_line

_DESCRIPTION = 80  # characters of an entry's description shown beside its name in the completion list


def _names(defined: dict[str, Any], names: list[tuple[str, str]], what: str, hint: str) -> None:
    """A string field made an enum of `names` ((name, description) pairs), with the editor's words for a miss."""
    for key in ("pattern", "minLength", "maxLength"):
        defined.pop(key, None)
    defined["enum"] = [name for name, _ in names]
    defined["enumDescriptions"] = [text for _, text in names]  # yaml-language-server's completion documentation
    defined["errorMessage"] = f"not a {what} of the catalog this schema was written with ({hint})"
    defined["description"] = (f"a {what} of the catalog: the built-in entries and those of the --catalog files the "
                              "schema was written with (`clusterforge schema --catalog FILE`)")


def hardware_names(defs: dict[str, Any], catalog: Catalog) -> None:
    """Make the pools' `hardware` and the fabric's `switch` enums of `catalog`'s names, in place."""
    entries = catalog.items()
    shown = [(name, one_line(entry.description)[:_DESCRIPTION]) for name, entry in entries]
    machines = [pair for pair, (_, entry) in zip(shown, entries, strict=True) if isinstance(entry, Server | Instance)]
    switches = [pair for pair, (_, entry) in zip(shown, entries, strict=True) if isinstance(entry, Switch)]
    hint = "`clusterforge catalog list`; a site's own: write the schema with `--catalog FILE`"
    _names(defs["Pool"]["properties"]["hardware"], machines, "server or instance type", hint)
    _names(defs["SwitchedFabric"]["properties"]["switch"], switches, "switch", hint)
