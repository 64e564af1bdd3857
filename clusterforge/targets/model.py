"""The blueprint model, composed from the targets: every pool's and cluster's fields (clusterforge/model) plus each
registered target's section (`aws:`) and pool fields (`efa_interfaces`).

A target brings its part of the blueprint in its own package (`Target.section_model`, `Target.pool_fields`), so a
new target adds keys to the schema, the editor's completion and the loader without an edit to clusterforge/model.
The composed classes are subclasses of `Cluster` and `Pool`: everything typed against those reads them unchanged.
`clusterforge.targets.blueprint_model()` composes them once from the registered targets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, create_model

from clusterforge.model import Cluster, Pool
from clusterforge.targets.protocol import Target


def _pool_fields(targets: Mapping[str, Target]) -> dict[str, Any]:
    """Every target's pool fields, by name; two targets may not claim one name (their meanings would clash)."""
    fields: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for target in targets.values():
        for name, info in (target.pool_fields.model_fields.items() if target.pool_fields else ()):
            if name in Pool.model_fields:
                raise RuntimeError(f"target {target.name}: pool field {name!r} is a field of every pool")
            if name in owner:
                raise RuntimeError(f"target {target.name}: pool field {name!r} is target {owner[name]}'s already")
            owner[name] = target.name
            fields[name] = (info.annotation, info)
    return fields


def compose(targets: Mapping[str, Target]) -> type[Cluster]:
    """The Cluster model with these targets' sections and pool fields."""
    pool = create_model("Pool", __base__=Pool, __doc__=Pool.__doc__, **_pool_fields(targets))
    sections: dict[str, Any] = {
        target.section: (target.section_model | None, None)
        for target in targets.values() if target.section is not None and target.section_model is not None}
    pools: Any = (Annotated[list[pool], Field(min_length=1)], ...)
    return create_model("Cluster", __base__=Cluster, __doc__=Cluster.__doc__, pools=pools, **sections)


def pool_of(model: type[Cluster]) -> type[Pool]:
    """The Pool model a composed Cluster model holds (for a pool a target adds, such as AWS's controller)."""
    pool: type[Pool] = model.model_fields["pools"].annotation.__args__[0]  # type: ignore[union-attr]
    return pool


def owned_pool_fields(targets: Mapping[str, Target]) -> dict[str, Target]:
    """The target owning each target-only pool field."""
    return {name: target for target in targets.values() if target.pool_fields is not None
            for name in target.pool_fields.model_fields}
