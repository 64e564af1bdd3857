"""A target's resources file: what its deployment builds from the blueprint, resource by resource, as `diff` compares
it (the deployment itself reads the blueprint). The target writes it and declares what changing each setting takes
(`TargetEffects.resource_classes`); this module knows only the shape, which is the same for every target:

    resources:
      <name>:                       # `fsx`, `pool gpu`: unique in the file
        kind: <kind>                # what sort of resource it is; a change of kind rebuilds it
        nodes: <hostlist>           # the nodes it serves: those a change of it reaches
        <setting>: <scalar>         # a string, number, boolean or null each

A render directory's copy is input (it can come from a pull request): read within the YAML bounds, any other shape
is a ClusterforgeError naming the file and the resource.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.render.yamlout import load

RESERVED = ("kind", "nodes")


@dataclass(frozen=True)
class Resource:
    """One resource: its kind, the nodes it serves (a hostlist) and its settings by name."""

    kind: str
    nodes: str = ""
    settings: dict[str, Any] = field(default_factory=dict)

    def setting(self, name: str) -> str | None:
        """A setting as text (None: absent or null), as `diff` shows and compares it."""
        value = self.settings.get(name)
        return None if value is None else value if isinstance(value, str) else json.dumps(value)


def dump(resources: dict[str, Resource]) -> dict[str, Any]:
    """The file's data for `yamlout.dump`."""
    return {"resources": {name: {"kind": r.kind, "nodes": r.nodes, **r.settings} for name, r in resources.items()}}


def read(text: str, file: str) -> dict[str, Resource]:
    """The resources in a file's `text` by name."""
    from clusterforge.files.yamlguard import check_graph, check_text

    try:
        check_text(text, file)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is not None:
            check_graph(node, file, limits.YAML_DEPTH.value, limits.YAML_NODES.value)
        data = load(text) if text else {}
    except yaml.YAMLError as exc:
        raise ClusterforgeError(Problem(f"is not YAML: {exc}".splitlines()[0], file)) from None
    raw = data.get("resources") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise ClusterforgeError(Problem("is not a resources file (a `resources:` mapping)", file))
    out: dict[str, Resource] = {}
    for name, body in raw.items():
        where = f"resources.{str(name)[:60]}"
        if not isinstance(body, dict) or not isinstance(body.get("kind"), str) or not isinstance(
                body.get("nodes", ""), str):
            raise ClusterforgeError(Problem("not a resource {kind, nodes, settings}", file, path=where))
        settings = {str(key): value for key, value in body.items() if key not in RESERVED}
        bad = next((key for key, value in settings.items()
                    if value is not None and not isinstance(value, str | int | float | bool)), None)
        if bad is not None:
            raise ClusterforgeError(Problem("a setting is a string, number, boolean or null", file,
                                            path=f"{where}.{bad[:60]}"))
        out[str(name)] = Resource(body["kind"], body.get("nodes", ""), settings)
    return out
