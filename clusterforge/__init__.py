"""clusterforge: one blueprint of a GPU training cluster drives policy checks, provisioning and a local lab."""

from clusterforge.core.version import __version__ as __version__

__all__ = ["__version__"]
