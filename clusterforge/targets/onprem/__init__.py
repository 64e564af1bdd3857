"""Target onprem: bare metal in a facility. The `site:` is checked (power, space, cooling) and the rendered
inventory drives the Ansible roles; storage is an existing Lustre file system."""

from __future__ import annotations

from clusterforge.catalog import Server
from clusterforge.targets.onprem.blueprint import blueprint_problems
from clusterforge.targets.protocol import Target

TARGET = Target(name="onprem", title="on-prem", hardware=Server, facility=True,
                blueprint_problems=blueprint_problems)
