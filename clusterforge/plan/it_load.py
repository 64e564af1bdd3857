"""The site's IT load: what PWR-007 holds to the contract and what the cost of power is computed from, so the two
never disagree."""

from __future__ import annotations

from clusterforge.catalog import Catalog, Server
from clusterforge.model import Cluster
from clusterforge.plan.loads import device_power_kw
from clusterforge.plan.model import Plan


def site_it_kw(cluster: Cluster, plan: Plan, catalog: Catalog) -> float:
    """Σ nameplate kW of the servers (a declared figure may raise one, never lower it) plus every racked fabric's
    switches; cloud pools draw nothing from the site."""
    it_kw = 0.0
    for pool in cluster.pools:
        entry = catalog.get(pool.hardware)
        if isinstance(entry, Server):
            it_kw += device_power_kw(pool, entry) * pool.ceiling  # the worst case: every node powered up
    for racked in plan.fabrics:  # one per blueprint, one per team on a shared site
        it_kw += racked.tree.switches * getattr(catalog.get(racked.switch), "max_power_kw", 0.0)
    return it_kw
