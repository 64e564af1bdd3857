"""Load a blueprint file: YAML with lines, then shape, then names and catalog keys. Raises on bad input."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clusterforge.catalog import Catalog, load_catalog
from clusterforge.errors import ClusterforgeError
from clusterforge.expand import apply_placements, expand
from clusterforge.limits import NODES, POOLS
from clusterforge.model import Cluster
from clusterforge.model.references import catalog_problems, reference_problems
from clusterforge.validation import validate
from clusterforge.yamlsource import Source, load_file, parse_text


@dataclass(frozen=True)
class Loaded:
    """A valid blueprint with the document it came from (for lines) and the catalog it was checked against."""

    cluster: Cluster
    source: Source
    catalog: Catalog

    @property
    def file(self) -> str:
        return self.source.file


def check_pools(source: Source) -> None:
    """Refuse, before the model sees them, more pools than limits.POOLS or more nodes than limits.NODES.

    Cheap on the raw data: a blueprint of 200,000 pools or a pool of ten million nodes is refused at once
    instead of being validated, planned and rendered.
    """
    pools = source.data.get("pools") if isinstance(source.data, dict) else None
    if not isinstance(pools, list):
        return
    if len(pools) > POOLS.value:
        raise ClusterforgeError(POOLS.problem(len(pools), source.file, source.line_of(("pools",)), "pools"))
    counts = [(p["count"], i) for i, p in enumerate(pools) if isinstance(p, dict) and type(p.get("count")) is int]
    total = sum(count for count, _ in counts if count > 0)
    if total > NODES.value:
        largest = max(counts)[1]
        path = ("pools", largest, "count")
        raise ClusterforgeError(NODES.problem(total, source.file, source.line_of(path), f"pools[{largest}].count"))


def from_source(source: Source, catalog: Catalog | None = None) -> Loaded:
    """Validate parsed YAML as a blueprint."""
    catalog = catalog if catalog is not None else load_catalog()
    if not isinstance(source.data, dict):
        raise ClusterforgeError(source.problem((), "a blueprint must be a mapping (apiVersion, kind, name, ...)"))
    check_pools(source)
    source = apply_placements(expand(source))
    cluster = validate(Cluster, source)
    problems = reference_problems(cluster, source) + catalog_problems(cluster, catalog, source)
    if problems:
        raise ClusterforgeError(sorted(problems, key=lambda p: p.line))
    return Loaded(cluster, source, catalog)


def load_blueprint(path: Path, catalog: Catalog | None = None) -> Loaded:
    """Read, parse and validate a blueprint file."""
    return from_source(load_file(path, fast=True), catalog)


def load_text(text: str, file: str = "<input>", catalog: Catalog | None = None) -> Loaded:
    """Validate a blueprint held in a string (tests, templates)."""
    return from_source(parse_text(text, file), catalog)
