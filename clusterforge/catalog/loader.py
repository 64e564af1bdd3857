"""Load the built-in catalog and user extensions into one frozen lookup.

The built-in catalog is the shared files here (catalog/data) and each target's part (catalog/parts.py), which the
targets' kernel collects: `clusterforge.target_kernel.load_catalog` is what commands call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

from clusterforge.catalog.models import CatalogFile, Entry, Instance, Nic, Server, Switch
from clusterforge.catalog.parts import CatalogPart, file_model
from clusterforge.catalog.price_book import PriceBook
from clusterforge.catalog.software import SoftwareCatalog
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.core.hints import closest
from clusterforge.core.validation import validate
from clusterforge.files.fastyaml import parse_fast
from clusterforge.files.yamlsource import Source, load_file, parse_text

E = TypeVar("E", bound=Server | Switch | Nic | Instance)
# nics first: servers name them (a server is checked against the NICs defined before it)
_BUILTIN_FILES = ("nics.yaml", "servers.yaml", "switches.yaml", "software.yaml", "prices.yaml")


class Catalog:
    """Hardware by key. Built-in keys cannot be redefined by user files (a silent shadow is a hazard)."""

    def __init__(self, entries: dict[str, Entry], origins: dict[str, str], software: SoftwareCatalog,
                 prices: PriceBook | None = None) -> None:
        self._entries = entries
        self.origins = origins
        self.software = software
        self.prices = prices if prices is not None else PriceBook()  # a site's file may restate a price

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> Entry:
        """The entry for `key`, or an input error naming the closest keys."""
        try:
            return self._entries[key]
        except KeyError:
            raise ClusterforgeError(self.unknown(key)) from None

    def with_entry(self, key: str, entry: Entry) -> Catalog:
        """A copy with `key` replaced (the lab describes its nodes with the figures of the machine it runs on)."""
        return Catalog({**self._entries, key: entry}, self.origins, self.software, self.prices)

    def unknown(self, key: str, source: Source | None = None, path: Sequence[str | int] = ()) -> Problem:
        """A Problem for an unknown hardware key, with the closest known names."""
        suggestion = closest(key, self._entries)
        hint = f"did you mean {suggestion}?" if suggestion else "see `clusterforge catalog list`"
        message = f"unknown hardware {shown(key)}"
        if source is not None:
            return source.problem(path, message, hint)
        return Problem(message, hint=hint)

    def of(self, key: str, kind: type[E]) -> E:
        """The entry for `key`, which must be of the given kind."""
        entry = self.get(key)
        if not isinstance(entry, kind):
            raise ClusterforgeError(f"{shown(key)} is a {entry.kind}, not a {kind.__name__.lower()}")
        return entry

    def items(self) -> list[tuple[str, Entry]]:
        return sorted(self._entries.items())


def _add_file(file: CatalogFile, source: Source, entries: dict[str, Entry], origins: dict[str, str],
              software: SoftwareCatalog, origin: str) -> list[Problem]:
    """Add one file's hardware and software rows; a key or release already defined is a problem, not a shadow."""
    problems = []
    for key, entry in file.hardware.items():
        if key in entries:
            problems.append(source.problem(("hardware", key), f"{shown(key)} is already defined ({origins[key]})",
                                           "give your variant a new key, e.g. " + f"{key}-site"))
            continue
        entries[key] = entry
        origins[key] = origin
    for key, entry in file.hardware.items():
        problems += [source.problem(("hardware", key, *where), message, hint)
                     for where, message, hint in nic_problems(entry, entries)]
    for table, index, row in file.software.rows():
        defined = software.add(table, row, origin)
        if defined is not None:
            problems.append(source.problem(
                ("software", table, index), f"{table} {shown(row.key)} is already defined ({defined})",
                "a qualified set adds releases the tables lack; to change a built-in pairing, report it upstream"))
    return problems


def nic_problems(entry: Entry, entries: dict[str, Entry]) -> list[tuple[tuple[str, ...], str, str]]:
    """A server's NICs against the `nic` entry they name: it exists, and they run no faster and speak nothing
    it does not. (path under the entry, message, hint) each."""
    if not isinstance(entry, Server) or entry.node_nics is None or entry.node_nics.model is None:
        return []
    nics, model = entry.node_nics, entry.node_nics.model
    where: tuple[str, ...] = ("hosts", "nics", "model") if entry.hosts else ("nics", "model")
    card = entries.get(model)
    if not isinstance(card, Nic):
        return [(where, f"nics.model {shown(model)} is not a nic of the catalog",
                 "name a `kind: nic` entry (`clusterforge catalog list --kind nic`), or leave model out")]
    out: list[tuple[tuple[str, ...], str, str]] = []
    if nics.speed_gbps > card.port_speed_gbps:
        out.append((where, f"{nics.speed_gbps}G NICs cannot be {model}, whose ports run at "
                    f"{card.port_speed_gbps}G", f"use speed_gbps: {card.port_speed_gbps} or less"))
    extra = sorted(set(nics.protocols or ()) - set(card.protocols))
    if extra:
        out.append((where, f"{model} does not speak {', '.join(extra)}",
                    f"use protocols: [{', '.join(card.protocols)}]"))
    return out


@lru_cache(maxsize=4)
def _builtin(parts: tuple[CatalogPart, ...]) -> tuple[dict[str, Entry], dict[str, str], SoftwareCatalog, PriceBook]:
    model = file_model(parts)
    entries: dict[str, Entry] = {}
    origins: dict[str, str] = {}
    software = SoftwareCatalog(list(model.model_fields["software"].annotation.model_fields))  # type: ignore[union-attr]
    prices = PriceBook()
    data = resources.files("clusterforge.catalog") / "data"
    for file_path in [*(data / name for name in _BUILTIN_FILES), *(f for part in parts for f in part.files)]:
        name = file_path.name
        source = parse_fast(file_path.read_text(encoding="utf-8"), f"<catalog>/{name}", parse_text)
        file = validate(model, source)
        problems = _add_file(file, source, entries, origins, software, f"built-in ({name})")
        assert not problems, problems  # the shipped data is checked by tests/test_catalog.py
        prices.add(file.prices, None)
    return entries, origins, software, prices


def compose_catalog(parts: Sequence[CatalogPart], extra: Sequence[Path] = ()) -> Catalog:
    """The built-in catalog (the shared files and these targets' parts) plus every user file in `extra`, in order:
    hardware, software sets and prices."""
    builtin, builtin_origins, builtin_software, builtin_prices = _builtin(tuple(parts))
    entries = dict(builtin)
    origins = dict(builtin_origins)
    software = builtin_software.copy()
    prices = builtin_prices.copy()
    model = file_model(parts)
    problems: list[Problem] = []
    for path in extra:
        source = load_file(path)
        file = validate(model, source)
        problems += _add_file(file, source, entries, origins, software, str(path))
        prices.add(file.prices, str(path))  # a site's price replaces the list price: a negotiated rate
    if problems:
        raise ClusterforgeError(problems)
    return Catalog(entries, origins, software, prices)
