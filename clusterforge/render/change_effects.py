"""What applying a day-two change takes: the action, the hosts it applies to, the daemon it restarts and why.

The types alone, below both what declares each setting's effect (clusterforge.render.declarations, the roles' and the
renderer's files) and what looks it up (clusterforge.render.change_classes).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal


class Action(enum.IntEnum):
    """What applying a change takes on a node, least disruptive first."""

    NONE = 0  # nothing to do on running nodes (accounting objects through sacctmgr, monitoring config)
    RECONFIGURE = 1  # `scontrol reconfigure`: slurmctld re-executes itself in place (SLURM 24.11), jobs untouched
    RESTART = 2  # a daemon restart (slurmd, slurmctld, slurmdbd): running jobs keep running
    DRAIN = 3  # the node must be idle while it changes (libraries jobs load): drain, apply, resume
    REBOOT = 4  # drain, apply, reboot (kernel modules, drivers), health-check, resume
    REIMAGE = 5  # the node is replaced (other hardware or instance type): drain, then re-provision
    LOSE_JOBS = 6  # queued or running jobs are lost (SelectType, SwitchType): drain the whole cluster first
    LOSE_DATA = 7  # stored data is lost: the provider replaces a file system (its deployment type), or deletes it


ACTION_NAMES = {action.name.lower(): action for action in Action}  # as declarations and manifests write them


@dataclass(frozen=True)
class VendorGpus:
    """The hosts with GPUs of one accelerator vendor (clusterforge/accelerators): where its driver changes apply."""

    vendor: str


@dataclass(frozen=True)
class FabricHosts:
    """The hosts on a fabric's own interfaces (a target's fabric, `fabric.kind`): where its driver and plugin
    changes apply. Those whose inventory gives `<kind>_interfaces`, else every compute node where the cluster's
    group vars say `<kind>_enabled` (day2.scope)."""

    kind: str


# Which hosts act, resolved on the new render (diff.py): "changed" is the hosts whose own value changed.
Hosts = Literal["none", "all", "controllers", "compute", "dbd", "gpu", "changed"] | VendorGpus | FabricHosts


@dataclass(frozen=True)
class Effect:
    """One entry of the table: the action, where it applies, the daemon it restarts, and why."""

    action: Action
    hosts: Hosts
    why: str
    daemon: str | None = None
