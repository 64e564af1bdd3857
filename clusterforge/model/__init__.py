"""Blueprint models (pydantic): the shape of a cluster description."""

from clusterforge.model.blueprint import (
    Cluster,
    Fabric,
    OnPremLustre,
    Oversubscription,
    Pool,
    SharedStorage,
    Software,
    Storage,
    SwitchedFabric,
    TargetFabric,
    Workload,
)
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
from clusterforge.model.slurm import (
    Account,
    Accounting,
    JobContainerTmpfs,
    Partition,
    PriorityWeights,
    Qos,
    Slurm,
)

__all__ = [
    "Account", "Accounting", "AirCooling", "Cluster", "ContainmentCooling",
    "Fabric", "Feed", "JobContainerTmpfs",
    "LiquidCooling", "OnPremLustre", "Oversubscription", "Panel", "Partition", "Placement", "Pool",
    "PriorityWeights", "Qos", "Rack", "RdhxCooling", "Row", "RowCooling", "SharedStorage", "Site", "Slurm",
    "Software", "Storage", "SwitchedFabric", "TargetFabric", "Workload",
]
