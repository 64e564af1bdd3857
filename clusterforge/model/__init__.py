"""Blueprint models (pydantic): the shape of a cluster description."""

from clusterforge.model.blueprint import (
    Cluster,
    EfaFabric,
    OnPremLustre,
    Partition,
    Pool,
    Slurm,
    Software,
    Storage,
    SwitchedFabric,
    Workload,
)
from clusterforge.model.cloud import Aws, AwsSecurity, CapacityBlock, FsxLustre, Ingress, Odcr, OnDemand
from clusterforge.model.site import (
    AirCooling,
    ContainmentCooling,
    Feed,
    LiquidCooling,
    Panel,
    Placement,
    Rack,
    RdhxCooling,
    Row,
    RowCooling,
    Site,
)

__all__ = [
    "AirCooling", "Aws", "AwsSecurity", "CapacityBlock", "Cluster", "ContainmentCooling", "EfaFabric", "Feed",
    "FsxLustre", "Ingress",
    "LiquidCooling", "Odcr", "OnDemand", "OnPremLustre", "Panel", "Partition", "Placement", "Pool", "Rack",
    "RdhxCooling", "Row", "RowCooling", "Site", "Slurm", "Software", "Storage", "SwitchedFabric", "Workload",
]
