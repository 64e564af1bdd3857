"""The hardware catalog: built-in YAML data plus optional user files, looked up by key."""

from clusterforge.catalog.loader import Catalog, load_catalog
from clusterforge.catalog.models import Cpus, Entry, Gpus, Instance, Nics, Psus, Server, Switch

__all__ = ["Catalog", "Cpus", "Entry", "Gpus", "Instance", "Nics", "Psus", "Server", "Switch", "load_catalog"]
