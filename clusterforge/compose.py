"""Teams that share one facility: blueprints that include the same site file are checked together.

Each team's blueprint places its pools into the shared racks (`placement:`); alone it sees only its own
load. The combined blueprint holds every team's pools (named `<team>-<pool>`) in the one site, so the
facility rules see the real load of each rack, row and the hall. Findings point into the file that wrote
the thing: racks into the site file, placements and pools into the team's file.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clusterforge.load import Loaded, from_source
from clusterforge.yamlsource import PathKey, Source


def shared_site(loaded: Loaded) -> Source | None:
    """The site file a blueprint includes, if it includes one."""
    inner = loaded.source.includes.get(("site",))
    return inner[0] if inner is not None and inner[1] == () else None


def groups(loadeds: Sequence[Loaded]) -> list[list[Loaded]]:
    """Blueprints grouped by the site file they include; only groups of two or more."""
    by_site: dict[str, list[Loaded]] = defaultdict(list)
    for loaded in loadeds:
        site = shared_site(loaded)
        if site is not None:
            by_site[str(Path(site.file).resolve())].append(loaded)
    return [group for group in by_site.values() if len(group) > 1]


def combine(group: Sequence[Loaded]) -> Loaded:
    """One blueprint with every team's pools and placements in the shared site."""
    site = shared_site(group[0])
    assert site is not None
    site_data = {k: v for k, v in site.data.items() if k not in ("apiVersion", "kind")}
    pools: list[Any] = []
    placement: list[Any] = []
    includes: dict[PathKey, tuple[Source, PathKey]] = {("site",): (site, ())}
    for loaded in group:
        team = loaded.cluster.name
        raw = loaded.source
        for j, pool in enumerate(loaded.cluster.pools):
            includes[("pools", len(pools))] = (raw, ("pools", j))
            pools.append({**pool.model_dump(exclude_none=True, exclude={"partition"}), "name": f"{team}-{pool.name}"})
        for i, entry in enumerate(loaded.cluster.placement):
            includes[("placement", len(placement))] = (raw, ("placement", i))
            placement.append({**entry.model_dump(exclude_none=True), "pool": f"{team}-{entry.pool}"})
    data = {"apiVersion": "clusterforge/v1", "kind": "Cluster", "name": "combined", "target": "onprem",
            "pools": pools, "site": site_data, "placement": placement}
    first = group[0]
    return from_source(Source(data, site.file, {}, includes=includes), first.catalog)
