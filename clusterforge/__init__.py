"""clusterforge: one blueprint of a GPU training cluster drives policy checks, provisioning and a local lab."""

__version__ = "0.1.0"
