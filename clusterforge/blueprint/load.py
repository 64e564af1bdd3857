"""Load a blueprint file: YAML with lines, then shape, then names and catalog keys. Raises on bad input."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from clusterforge.blueprint.expand import apply_placements, expand
from clusterforge.catalog import Catalog, Instance, Server
from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.hints import and_more, capped
from clusterforge.core.limits import NODES, POOLS, POWER_ELEMENTS
from clusterforge.core.validation import validate
from clusterforge.files.yamlsource import Source, load_file, parse_text
from clusterforge.model import Cluster
from clusterforge.model.references import reference_problems
from clusterforge.target_kernel import blueprint_model, load_catalog, registered
from clusterforge.target_kernel.checks import catalog_problems, target_problems


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
    """Refuse, before the model sees them, more pools than limits.POOLS: cheap on the raw data, so a blueprint of
    200,000 pools is refused at once instead of being validated. Counts are checked on the model
    (check_nodes): a count written as text or as a float is only a number once pydantic has read it."""
    pools = source.data.get("pools") if isinstance(source.data, dict) else None
    if isinstance(pools, list) and len(pools) > POOLS.value:
        raise ClusterforgeError(POOLS.problem(len(pools), source.file, source.line_of(("pools",)), "pools"))


def check_power_elements(source: Source) -> None:
    """Refuse, before the model sees them, a site with more panels and power sources together than
    limits.POWER_ELEMENTS: the power rules judge the loss of each one with everything below it, so their work
    grows faster than the count. Cheap on the raw data, as check_pools is."""
    site = source.data.get("site") if isinstance(source.data, dict) else None
    if not isinstance(site, dict):
        return
    lists = [(key, found) for key in ("panels", "power_sources") if isinstance(found := site.get(key), list)]
    total = sum(len(found) for _, found in lists)
    if total > POWER_ELEMENTS.value:
        key = max(lists, key=lambda pair: len(pair[1]))[0]
        raise ClusterforgeError(POWER_ELEMENTS.problem(total, source.file, source.line_of(("site", key)),
                                                       f"site.{key}"))


def _hosts_per_device(catalog: Catalog, key: str) -> int:
    """SLURM hosts one device of a catalog entry holds (18 trays of an NVL72 rack, the instances of a cloud's
    rack-scale device); 1 for an unknown key, which catalog_problems reports."""
    entry = catalog.get(key) if key in catalog else None
    return entry.hosts_per_device if isinstance(entry, Server | Instance) else 1


def check_nodes(cluster: Cluster, catalog: Catalog, source: Source) -> None:
    """Refuse more SLURM hosts than limits.NODES, counted on the validated model before anything else is
    worked out: each pool's count as pydantic read it ("10000000" and 1e7 included) times the hosts in one
    of its devices. Placements are checked against the pools' counts (reference_problems), so they add none."""
    hosts = [pool.ceiling * _hosts_per_device(catalog, pool.hardware) for pool in cluster.pools]
    total = sum(hosts)
    if total > NODES.value:
        largest = max(range(len(hosts)), key=hosts.__getitem__)
        path = ("pools", largest, "count")
        raise ClusterforgeError(NODES.problem(total, source.file, source.line_of(path), f"pools[{largest}].count"))


def from_source(source: Source, catalog: Catalog | None = None) -> Loaded:
    """Validate parsed YAML as a blueprint."""
    catalog = catalog if catalog is not None else load_catalog()
    if not isinstance(source.data, dict):
        raise ClusterforgeError(source.problem((), "a blueprint must be a mapping (apiVersion, kind, name, ...)"))
    check_pools(source)
    check_power_elements(source)
    source = apply_placements(expand(source))
    cluster = validate(blueprint_model(), source)
    check_nodes(cluster, catalog, source)
    targets = registered()
    found = [*reference_problems(cluster, source), *target_problems(cluster, source, targets),
             *catalog_problems(cluster, catalog, source, targets)]
    problems = capped(found,
                      lambda p: p.message, lambda p, n: replace(p, message=and_more(p.message, n), hint=""))
    if problems:
        raise ClusterforgeError(sorted(problems, key=lambda p: p.line))
    return Loaded(cluster, source, catalog)


def load_blueprint(path: Path, catalog: Catalog | None = None) -> Loaded:
    """Read, parse and validate a blueprint file."""
    return from_source(load_file(path, fast=True), catalog)


def load_text(text: str, file: str = "<input>", catalog: Catalog | None = None) -> Loaded:
    """Validate a blueprint held in a string (tests, templates)."""
    return from_source(parse_text(text, file), catalog)
