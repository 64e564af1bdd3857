"""Target onprem: bare metal in a facility. The `site:` is checked (power, space, cooling) and the rendered
inventory drives the Ansible roles; storage is an existing Lustre file system."""

from __future__ import annotations

from clusterforge.catalog import Server
from clusterforge.target_kernel.protocol import Target
from clusterforge.targets.onprem.blueprint import blueprint_problems

TARGET = Target(name="onprem", title="on-prem", hardware=Server, facility=True,
                blueprint_problems=blueprint_problems)
