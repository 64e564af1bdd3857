"""What a target adds to the catalog, and the catalog file's model composed with it.

The catalog every target shares is servers, switches, the shared software tables and prices (catalog/data). A cloud
brings the rest in its own folder (its `catalog.py`'s `CATALOG`, a `CatalogPart`): its kind of instance type (the
figures its deployment needs), its software tables (what its fabric needs installed) and price tables (what only it
sells), and the data files that fill them, each figure with its source as here. A site's catalog file is read with
the same composed model, so it may add to any of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources.abc import Traversable
from typing import Annotated, Any, Union, get_args

from pydantic import BaseModel, Discriminator, Field, Tag, create_model

from clusterforge.catalog.models import CatalogFile, Instance, Nic, Server, Switch
from clusterforge.catalog.prices import prices_model
from clusterforge.catalog.software import Row, tables_model
from clusterforge.core.text import CatalogKey


@dataclass(frozen=True)
class CatalogPart:
    """A target's part of the catalog."""

    files: tuple[Traversable, ...] = ()  # built-in data files (`kind: Catalog`), read after the shared ones
    instance: type[Instance] | None = None
    """Its kind of instance type: a subclass of `Instance` whose `provider` is `Literal["<target>"]`; at most one
    target's kind gives `provider` a default, taken by entries that leave it out."""
    software: tuple[type[Row], ...] = ()  # its software tables, one row class each
    prices: type[BaseModel] | None = None  # its price tables: fields of `dict[str, Price]`


def provider_of(model: type[Instance]) -> str:
    """The target name an instance kind's `provider` literal states."""
    (name,) = get_args(model.model_fields["provider"].annotation)
    return str(name)


def _instance_kinds(models: Sequence[type[Instance]]) -> Any:
    """One instance kind as it is; several told apart by `provider` (left out: the one kind with a default)."""
    if len(models) == 1:
        return models[0]
    default = next((provider_of(m) for m in models if not m.model_fields["provider"].is_required()), None)

    def tag(value: Any) -> str | None:
        found = value.get("provider") if isinstance(value, dict) else getattr(value, "provider", None)
        return str(found) if found is not None else default

    members = tuple(Annotated[m, Tag(provider_of(m))] for m in models)
    return Annotated[Union[members], Discriminator(tag)]  # noqa: UP007 (a tuple of members)


def file_model(parts: Sequence[CatalogPart]) -> type[CatalogFile]:
    """The catalog file's model with these parts' instance kinds, software tables and price tables (made once per
    set of parts)."""
    return _file_model(tuple(parts))


@lru_cache(maxsize=8)
def _file_model(parts: tuple[CatalogPart, ...]) -> type[CatalogFile]:
    instances = [p.instance for p in parts if p.instance is not None]
    rows = [row for p in parts for row in p.software]
    prices = [p.prices for p in parts if p.prices is not None]
    if not (instances or rows or prices):
        return CatalogFile
    kinds: tuple[Any, ...] = (Server, Switch, Nic, *((_instance_kinds(instances),) if instances else ()))
    entry: Any = Annotated[Union[kinds], Field(discriminator="kind")]  # noqa: UP007
    tables, priced = tables_model(rows), prices_model(prices)
    made: type[CatalogFile] = create_model(
        "CatalogFile", __base__=CatalogFile, __doc__=CatalogFile.__doc__,
        hardware=(dict[CatalogKey, entry], {}), software=(tables, tables()), prices=(priced, priced()))
    return made
