"""The stack as a stack policy sees it: resources by type, and which resource a property points at.

During preview the ids of resources not yet created are unknown, so a reference is resolved by value
when the value is known (an id, name or ARN in the target's outputs) and otherwise by the engine's
property dependencies (the resources whose outputs fed that property).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from clusterforge.targets.aws.crossguard.props import UNKNOWN, read

HANDLES = ("id", "name", "arn", "placementGroupId")


class StackResource(Protocol):
    """What pulumi_policy's PolicyResource offers and the stack rules read."""

    @property
    def resource_type(self) -> str: ...

    @property
    def props(self) -> Mapping[str, Any]: ...

    @property
    def urn(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def property_dependencies(self) -> Mapping[str, Sequence[StackResource]]: ...


@dataclass(frozen=True)
class Violation:
    """A message and the resource it is about (None: the stack as a whole)."""

    message: str
    urn: str | None = None


def of_type(resources: Iterable[StackResource], *types: str) -> list[StackResource]:
    return [r for r in resources if r.resource_type in types]


def handles(resource: StackResource) -> set[str]:
    """The known strings other resources use to name this one (id, name, ARN, placement group id)."""
    return {value for key in HANDLES if isinstance(value := read(resource.props, key), str) and value}


def targets(source: StackResource, prop: str, value: Any, candidates: Iterable[StackResource]) -> list[StackResource]:
    """The candidates that `value`, read under `source`'s top-level property `prop`, points at."""
    pool = list(candidates)
    if value is None or value == "":
        return []
    if isinstance(value, str):
        named = [c for c in pool if value in handles(c)]
        if named:
            return named
    elif value is not UNKNOWN:
        return []
    fed_by = {d.urn for d in source.property_dependencies.get(prop, ())}
    return [c for c in pool if c.urn in fed_by]


def points_at(source: StackResource, prop: str, target: StackResource) -> bool:
    """Whether `source`'s top-level property `prop` names `target`."""
    return bool(targets(source, prop, read(source.props, prop), [target]))
