"""The blueprint model, composed from the targets: every pool's and cluster's fields (clusterforge/model) plus each
registered target's section (`aws:`), pool fields (`efa_interfaces`), fabric kinds (`efa`) and managed Lustre (FSx).

A target brings its part of the blueprint in its own package (its `blueprint.py`'s `BlueprintPart`), so a
new target adds keys to the schema, the editor's completion and the loader without an edit to clusterforge/model.
The composed classes are subclasses of `Cluster` and `Pool`: everything typed against those reads them unchanged.
`clusterforge.target_kernel.blueprint_model()` composes them once from the registered targets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import BaseModel, Discriminator, Field, Tag, create_model

from clusterforge.accelerator_kernel import registered as registered_vendors
from clusterforge.core.text import VersionPin
from clusterforge.model import Cluster, OnPremLustre, Pool, Software, Storage, SwitchedFabric
from clusterforge.model.blueprint import SoftwarePins
from clusterforge.target_kernel.protocol import Target
from clusterforge.target_kernel.stages import blueprint_part

EXISTING = "onprem"  # the tag of the form every target shares: an existing Lustre the nodes mount


def _pool_fields(targets: Mapping[str, Target]) -> dict[str, Any]:
    """Every target's pool fields, by name; two targets may not claim one name (their meanings would clash)."""
    fields: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for target in targets.values():
        own = blueprint_part(target).pool_fields
        for name, info in (own.model_fields.items() if own else ()):
            if name in Pool.model_fields:
                raise RuntimeError(f"target {target.name}: pool field {name!r} is a field of every pool")
            if name in owner:
                raise RuntimeError(f"target {target.name}: pool field {name!r} is target {owner[name]}'s already")
            owner[name] = f"target {target.name}"
            fields[name] = (info.annotation, info)
    return fields


def _fabric(targets: Mapping[str, Target]) -> dict[str, Any]:
    """The `fabric` field with every target's own kinds beside the switched ones, told apart by `kind`."""
    kinds = [model for target in targets.values() for model in blueprint_part(target).fabrics]
    if not kinds:
        return {}
    info = Cluster.model_fields["fabric"]
    fabric: Any = Annotated[Union[(SwitchedFabric, *kinds)], Field(discriminator="kind")]
    return {"fabric": (Annotated[fabric | None, *info.metadata], None)}


def _lustre_form(forms: Mapping[str, type[BaseModel]]) -> Callable[[Any], str]:
    """A target's managed Lustre when a key only it has is present; otherwise an existing file system."""
    own = {tag: set(model.model_fields) - set(OnPremLustre.model_fields) for tag, model in forms.items()}

    def form(value: Any) -> str:
        if isinstance(value, dict):
            keys = set(value)
        elif isinstance(value, BaseModel):
            keys = set(value.model_fields_set)
        else:
            return EXISTING  # not a mapping: the existing form's model reports the wrong type
        return next((tag for tag, fields in own.items() if keys & fields), EXISTING)

    return form


def _storage(targets: Mapping[str, Target]) -> dict[str, Any]:
    """The `storage` field whose `lustre` may also be each target's managed Lustre."""
    forms = {target.name: form for target in targets.values() if (form := blueprint_part(target).lustre)}
    if not forms:
        return {}
    members = (*(Annotated[model, Tag(tag)] for tag, model in forms.items()), Annotated[OnPremLustre, Tag(EXISTING)])
    lustre: Any = Annotated[Union[members], Discriminator(_lustre_form(forms))]  # noqa: UP007
    storage = create_model("Storage", __base__=Storage, __doc__=Storage.__doc__, lustre=(lustre | None, None))
    return {"storage": (storage, storage())}


def _software(targets: Mapping[str, Target]) -> tuple[type[Software], type[SoftwarePins]] | None:
    """`software:` with every accelerator vendor's pins (clusterforge.accelerators: their `versions` as defaults)
    and every target's own (their defaults), and a pool's override with each of them optional; two vendors or
    targets may not claim one pin, nor one a pin every cluster has."""
    fields: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for vendor in registered_vendors().values():
        versions = dict(vendor.versions)
        for name in vendor.software_fields:
            if name in Software.model_fields or name in owner:
                raise RuntimeError(f"accelerator {vendor.name}: software pin {name!r} is taken")
            owner[name] = f"accelerator {vendor.name}"
            fields[name] = ((VersionPin, versions[name]) if name in versions else (VersionPin | None, None))
    for target in targets.values():
        own = blueprint_part(target).software
        for name, info in (own.model_fields.items() if own else ()):
            if name in Software.model_fields or name in owner:
                raise RuntimeError(f"target {target.name}: software pin {name!r} is "
                                   f"{'every cluster' if name in Software.model_fields else owner[name]}'s")
            owner[name] = f"target {target.name}"
            fields[name] = (info.annotation, info)
    if not fields:
        return None
    software = create_model("Software", __base__=Software, __doc__=Software.__doc__, **fields)
    optional: dict[str, Any] = {name: (VersionPin | None, None) for name in fields}
    pins = create_model("SoftwarePins", __base__=SoftwarePins, __doc__=SoftwarePins.__doc__, **optional)
    return software, pins


def compose(targets: Mapping[str, Target]) -> type[Cluster]:
    """The Cluster model with these targets' sections, pool fields, software pins, fabric kinds and managed
    Lustre."""
    software = _software(targets)
    overrides: dict[str, Any] = {} if software is None else {"software": (software[1] | None, None)}
    own: dict[str, Any] = {} if software is None else {"software": (software[0], software[0]())}
    pool = create_model("Pool", __base__=Pool, __doc__=Pool.__doc__, **_pool_fields(targets), **overrides)
    parts = [blueprint_part(target) for target in targets.values()]
    sections: dict[str, Any] = {part.section: (part.section_model | None, None)
                                for part in parts if part.section is not None and part.section_model is not None}
    pools: Any = (Annotated[list[pool], Field(min_length=1)], ...)
    return create_model("Cluster", __base__=Cluster, __doc__=Cluster.__doc__, pools=pools, **_fabric(targets),
                        **_storage(targets), **own, **sections)


def pool_of(model: type[Cluster]) -> type[Pool]:
    """The Pool model a composed Cluster model holds (for a pool a target adds, such as AWS's controller)."""
    pool: type[Pool] = model.model_fields["pools"].annotation.__args__[0]  # type: ignore[union-attr]
    return pool


def owned_pool_fields(targets: Mapping[str, Target]) -> dict[str, Target]:
    """The target owning each target-only pool field."""
    return {name: target for target in targets.values() if (own := blueprint_part(target).pool_fields) is not None
            for name in own.model_fields}
