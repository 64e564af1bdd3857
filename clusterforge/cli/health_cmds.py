"""The `health` group: the node health check's deeper tiers, on demand. Its commands live in their own modules
(health_diag_cmds.py, health_perf_cmds.py, health_allreduce_cmds.py) and are added to it here."""

from __future__ import annotations

from clusterforge.cli.app import app
from clusterforge.cli.health_allreduce_cmds import allreduce
from clusterforge.cli.health_diag_cmds import diag
from clusterforge.cli.health_perf_cmds import perf


@app.group("health")
def health_group() -> None:
    """The node health check's deeper tiers, on demand.

    \b
    The periodic check (HealthCheckProgram), the prolog and the epilog run by themselves on every compute node
    (roles/health); a failing check drains the node with a reason code (docs/operations.md). These commands run
    what is too long for them, or what needs the whole fleet to judge:
      clusterforge health diag --level 2 --nodes gpu-[0001-0004] --ssh login-0001
      clusterforge health diag --level 3 --nodes gpu-0007 --drain --lab clusterforge
      clusterforge health perf --nodes gpu-[00001-12500] --reservation maint --ssh login-0001 --drain
      clusterforge health allreduce --nodes gpu-[0001-0064] --pairs --min-busbw 300 --ssh login-0001
    """


health_group.add_command(diag)
health_group.add_command(perf)
health_group.add_command(allreduce)
