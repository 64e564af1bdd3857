"""How target lab's nodes are powered (`POWER`): the lab's power agent starts and removes their containers, asked
by the provider in `powersave.py`."""

from __future__ import annotations

from clusterforge.target_kernel.protocol import NodePower
from clusterforge.targets.lab.powersave import LabProvider

POWER = NodePower(provider=LabProvider)
