"""Load a blueprint file: YAML with lines, then shape, then names and catalog keys. Raises on bad input."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clusterforge.catalog import Catalog, load_catalog
from clusterforge.errors import ClusterforgeError
from clusterforge.expand import apply_placements, expand
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


def from_source(source: Source, catalog: Catalog | None = None) -> Loaded:
    """Validate parsed YAML as a blueprint."""
    catalog = catalog if catalog is not None else load_catalog()
    if not isinstance(source.data, dict):
        raise ClusterforgeError(source.problem((), "a blueprint must be a mapping (apiVersion, kind, name, ...)"))
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
