"""What changing each setting of what the stack builds takes on a running cluster (data/cloud-changes.yaml): the
FSx file system, its S3 link, and each pool's launch template or instances, as the provider documents it.

FSx grown in place and FSx replaced with an empty file system differ by every byte on it, so each row is data with
the sentence (or the provider's schema line) that states it, as slurm.conf keys are (catalog/data/slurm-changes.yaml):
a reviewer checks a class against AWS's words, not against code. `classes` turns the table into the render
manifest's entries for one render's resources file (cloud_resources.py writes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterforge.catalog.tables import validated_table
from clusterforge.render.change_effects import Action, Effect
from clusterforge.render.manifest import Case, Classed
from clusterforge.render.resource_file import Resource

DATA = "cloud-changes.yaml"
DECLARED_BY = f"clusterforge/targets/aws/data/{DATA}"
CloudAction = Literal["in_place", "rolling", "loses_data"]
ACTIONS: dict[str, tuple[Action, Literal["none", "changed"]]] = {
    "in_place": (Action.NONE, "none"), "rolling": (Action.REIMAGE, "changed"),
    "loses_data": (Action.LOSE_DATA, "changed")}
Text = Annotated[str, Field(min_length=1, max_length=400)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cited(_Strict):
    """One class of change: the action, why, and the source's own words that say so."""

    action: CloudAction
    why: Text
    source: Text
    quote: Annotated[str, Field(min_length=20, max_length=400)]

    @property
    def cited(self) -> str:
        """`why (source: "quote")`: the diff's headings show the reason, JSON keeps the quote."""
        return f'{self.why} ({self.source}: "{" ".join(self.quote.split())}")'

    def effects(self) -> tuple[Effect, ...]:
        action, hosts = ACTIONS[self.action]
        return (Effect(action, hosts, self.cited),)


class Where(Cited):
    """A row for a resource whose `setting` has one of `values` (a SCRATCH_1 file system cannot be resized)."""

    setting: Text
    values: tuple[str, ...]


class Row(Cited):
    """One setting: its class, the class of a change to a lower number or version, and rows by another setting."""

    smaller: Cited | None = None
    where: tuple[Where, ...] = ()

    def classed(self, resource: Resource) -> Classed:
        """The class of this setting on `resource` (its other settings choose a `where` row)."""
        row: Cited = next((w for w in self.where if resource.setting(w.setting) in w.values), self)
        cases = (Case("smaller", self.smaller.effects()),) if self.smaller is not None and row is self else ()
        return Classed(row.effects(), DECLARED_BY, cases=cases)


class Kind(_Strict):
    """A kind of resource: what it appearing, disappearing or being rebuilt as another kind takes, and its rows."""

    title: Text
    added: Cited
    removed: Cited
    rebuilt: Cited | None = None
    settings: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")], Row]

    def presence(self) -> Classed:
        """The resource's own key: rebuilt (its kind changed; removed's class when the kind cannot change),
        added or removed."""
        return Classed((self.rebuilt or self.removed).effects(), DECLARED_BY,
                       cases=(Case("added", self.added.effects()), Case("removed", self.removed.effects())))


class Table(_Strict):
    apiVersion: Literal["clusterforge/v1"]
    kind: Literal["CloudChanges"]
    sources: dict[str, Text] = {}
    kinds: dict[str, Kind]

    def classes(self, found: Mapping[str, Resource]) -> dict[str, Classed]:
        """Each key of a resources file (a resource, `<resource>.<setting>`) with its class; a kind or setting the
        table has no row for is left out (the diff then treats it as needing idle nodes, and a test fails)."""
        out: dict[str, Classed] = {}
        for name, resource in found.items():
            kind = self.kinds.get(resource.kind)
            if kind is None:
                continue
            out[name] = kind.presence()
            for setting in resource.settings:
                row = kind.settings.get(setting)
                if row is not None:
                    out[f"{name}.{setting}"] = row.classed(resource)
        return out


def load(text: str, name: str) -> Table:
    """The table in `text`; a row without its source and quote, or any other shape, is an input problem."""
    return validated_table(Table, text, name)


@lru_cache(maxsize=1)
def table() -> Table:
    """The packaged table, read once."""
    text = (resources.files("clusterforge.targets.aws") / "data" / DATA).read_text(encoding="utf-8")
    return load(text, DECLARED_BY)
