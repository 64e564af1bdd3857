"""Target lab: a pool whose nodes are containers of the local lab (`clusterforge lab up`), started and removed by
clusterforge's power-save programs as EC2 instances are on AWS. It lets SLURM's real power saving (State=CLOUD
nodes, ResumeProgram, SuspendProgram, the reconcile timer) run end to end on one machine: a pool of an on-prem
cluster names it (`target: lab`) with a `max_count`, and the lab's power agent (clusterforge/lab/power_agent.py)
answers the programs' provider of this target (`powersave.py` beside this file). A whole cluster on it is refused:
the lab runs an on-prem blueprint, and only its power-saved pools are made on demand."""

from __future__ import annotations

from clusterforge.catalog import Server
from clusterforge.target_kernel.protocol import Target

TARGET = Target(name="lab", title="lab containers", hardware=Server)
