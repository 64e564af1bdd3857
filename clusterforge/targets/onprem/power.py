"""How target onprem's nodes are powered (`POWER`): through their servers' BMCs (`powersave.py`), for the pools whose
servers have them (`bmc: redfish`, `bmc: ipmi`)."""

from __future__ import annotations

from clusterforge.target_kernel.protocol import NodePower
from clusterforge.targets.onprem.pool import BMC_NEEDED, has_bmcs
from clusterforge.targets.onprem.powersave import BmcProvider

POWER = NodePower(provider=BmcProvider, powers_pool=has_bmcs, needs=BMC_NEEDED)
