"""The hardware catalog: built-in YAML data plus optional user files, looked up by key.

`compose_catalog` reads it with the parts the targets add (`CatalogPart`); `clusterforge.target_kernel.load_catalog`
passes every registered target's.
"""

from clusterforge.catalog.loader import Catalog, compose_catalog
from clusterforge.catalog.models import Cpus, Entry, Gpus, Instance, Nic, Nics, Psus, Server, Switch
from clusterforge.catalog.parts import CatalogPart

__all__ = ["Catalog", "CatalogPart", "Cpus", "Entry", "Gpus", "Instance", "Nic", "Nics", "Psus", "Server",
           "Switch", "compose_catalog"]
