"""Target onprem: bare metal in a facility. The `site:` is checked (power, space, cooling) and the rendered
inventory drives the Ansible roles; storage is an existing Lustre file system. A pool whose servers' BMCs answer
Redfish or IPMI (`bmc: redfish`, `bmc: ipmi`) may have a `max_count`: SLURM powers its idle servers off and on
through them (`powersave.py` beside this file)."""

from __future__ import annotations

from clusterforge.catalog import Server
from clusterforge.target_kernel.protocol import Target

TARGET = Target(name="onprem", title="on-prem", hardware=Server, facility=True)
