"""What changing a slurm.conf key takes on a running cluster, as catalog data (data/slurm-changes.yaml).

A daemon restart, a reconfigure and a change that loses the queue differ by hours at 12,500 nodes, so the class
of each key is data with the man page sentence that states it, not a list in code: a reviewer checks a row
against SLURM's own words, and a key no row names takes the man page's general rule (`default`).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from clusterforge.catalog.tables import validated_table

DATA = "slurm-changes.yaml"
PAGES = ("slurm.conf(5)", "scontrol(1)")
ChangeAction = Literal["reconfigure", "restart", "drain", "lose_jobs"]
Daemon = Literal["slurmctld", "slurmd", "slurmdbd"]
Quote = Annotated[str, Field(min_length=30, max_length=400, pattern=r"\.$")]
Key = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    action: ChangeAction
    daemons: tuple[Daemon, ...] = ()
    page: Literal["slurm.conf(5)", "scontrol(1)"]
    section: Annotated[str, Field(min_length=1)]
    quote: Quote
    why: Annotated[str, Field(min_length=1, max_length=200)]

    @property
    def cited(self) -> str:
        """The row's reason with its source: `why (slurm.conf(5) 24.11, SelectType: "…")`."""
        return f'{self.why} ({self.page} 24.11, {self.section}: "{" ".join(self.quote.split())}")'


class Exempt(_Row):
    """A change of value the man page exempts from its key's class (SelectType cons_res -> cons_tres)."""

    old: Annotated[str, Field(min_length=1)]
    new: Annotated[str, Field(min_length=1)]


class Row(_Row):
    """One key's class, the daemons it restarts (above reconfigure) and the sentence that says so."""

    exceptions: tuple[Exempt, ...] = ()

    def for_values(self, old: str | None, new: str | None) -> _Row:
        """The row that applies to changing `old` to `new`: an exception's when one names the pair."""
        return next((e for e in self.exceptions if _plugin(e.old) == _plugin(old) and _plugin(e.new) == _plugin(new)),
                    self)


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    apiVersion: Literal["clusterforge/v1"]
    kind: Literal["SlurmChanges"]
    release: str
    source: Annotated[str, Field(min_length=1)]
    default: Row
    nodes: Row
    keys: dict[Key, Row]

    def row(self, key: str) -> Row:
        """The row of a slurm.conf key (SLURM reads keys ignoring case), or `default`."""
        folded = key.lower()
        return next((row for name, row in self.keys.items() if name.lower() == folded), self.default)


def _plugin(value: str | None) -> str:
    """A plugin value as SLURM matches it: no case, the type prefix optional (`cons_res` is `select/cons_res`)."""
    return (value or "").strip().lower().rpartition("/")[2]


def load(text: str, name: str) -> Table:
    """The table in `text`; a row without its sentence, or any other shape, is an input problem naming it."""
    return validated_table(Table, text, name)


def packaged() -> Traversable:
    """The file the table is read from: the one shipped in the package, where a new key's row goes."""
    return resources.files("clusterforge.catalog") / "data" / DATA


def read(path: Traversable) -> Table:
    """The table in the file at `path`: the packaged one, or a copy with a row added (the contributing guide's
    recipe test reads one)."""
    return load(path.read_text(encoding="utf-8"), str(path))


@lru_cache(maxsize=1)
def changes() -> Table:
    """The packaged table, read once (problems name the file as it lies in the repository)."""
    return load(packaged().read_text(encoding="utf-8"), f"clusterforge/catalog/data/{DATA}")
