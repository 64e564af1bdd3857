"""What a comparison of two renders yields: each changed setting (`Change`) with what applying it takes and on
which hosts, the plan's figures that moved, and the questions `diff` and `update` ask of the whole (`Diff`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

from clusterforge.render.change_classes import Action

__all__ = ["Action", "Change", "Diff", "PhysicalDelta"]


@dataclass(frozen=True)
class Change:
    """One changed setting and what applying it takes. `hosts` are NEW's names (a removed host: OLD's); a change
    that restarts two daemons is two Changes with the same key, one per daemon."""

    file: str  # "slurm.conf", "gres.conf", "group_vars", "hosts.yml", "pulumi", "pools", ...
    key: str  # "PartitionName=debug", "MaxJobCount", "nvidia_driver_version", "gpu-0001"
    old: str | None  # None: added
    new: str | None  # None: removed
    action: Action
    hosts: tuple[str, ...]
    daemon: str | None  # for RESTART/RECONFIGURE: "slurmctld", "slurmd", "slurmdbd", or None
    why: str


@dataclass(frozen=True)
class PhysicalDelta:
    what: str
    old: float
    new: float
    unit: str


@dataclass(frozen=True)
class Diff:
    added: tuple[str, ...]  # hosts in NEW only
    removed: tuple[str, ...]  # hosts in OLD only
    changed: tuple[str, ...]  # hosts in both whose host or pool vars differ (or their groups, or hardware)
    changes: tuple[Change, ...]
    physical: tuple[PhysicalDelta, ...]
    powered_added: tuple[str, ...] = ()  # SLURM nodes in NEW only that no inventory lists: SLURM powers them up
    powered_removed: tuple[str, ...] = ()  # the same in OLD only

    @cached_property
    def _actions(self) -> dict[str, Action]:
        """Each host named by a change with the largest action naming it (computed once: 12,500 hosts)."""
        out: dict[str, Action] = {}
        for change in self.changes:
            for host in change.hosts:
                out[host] = max(out.get(host, Action.NONE), change.action)
        return out

    def action_for(self, host: str) -> Action:
        """The largest action of the changes naming `host` (NONE if none)."""
        return self._actions.get(host, Action.NONE)

    @cached_property
    def _node_actions(self) -> dict[str, Action]:
        out: dict[str, Action] = {}
        for change in self.changes:
            if change.action < Action.LOSE_JOBS:
                for host in change.hosts:
                    out[host] = max(out.get(host, Action.NONE), change.action)
        return out

    def node_action_for(self, host: str) -> Action:
        """What `host` itself must go through, leaving out the changes that lose jobs or data: the first restart
        daemons on every host at once (their jobs are gone either way), the second replace a file system the
        deployment owns (nothing on the node rolls it), so neither rolls a node."""
        return self._node_actions.get(host, Action.NONE)

    @property
    def job_loss(self) -> tuple[Change, ...]:
        """The changes that lose queued or running jobs (LOSE_JOBS)."""
        return tuple(change for change in self.changes if change.action == Action.LOSE_JOBS)

    @property
    def loses_jobs(self) -> bool:
        return bool(self.job_loss)

    @property
    def data_loss(self) -> tuple[Change, ...]:
        """The changes that lose stored data (LOSE_DATA): a file system the provider replaces or deletes."""
        return tuple(change for change in self.changes if change.action == Action.LOSE_DATA)

    @property
    def loses_data(self) -> bool:
        return bool(self.data_loss)

    def hosts_at_least(self, action: Action) -> tuple[str, ...]:
        """The hosts some change names whose largest action is `action` or more, in the order changes name them."""
        return tuple(host for host, largest in self._actions.items() if largest >= action)

    @property
    def interrupted(self) -> tuple[str, ...]:
        """The running hosts applying this interrupts: removed, or drained, rebooted or reimaged."""
        added = set(self.added)
        return (*self.removed, *(host for host in self.hosts_at_least(Action.DRAIN)
                                 if host not in added and host not in self.removed))

    @property
    def disruptive(self) -> bool:
        """Applying it touches running jobs: a DRAIN or more on a host in both, a host removed, jobs or data lost."""
        return bool(self.interrupted) or self.loses_jobs or self.loses_data

    @property
    def slurm_upgrade(self) -> bool:
        """The slurm_version pin changed."""
        return any(change.file == "group_vars" and change.key == "slurm_version" for change in self.changes)

    @property
    def largest(self) -> Action:
        return max((change.action for change in self.changes), default=Action.NONE)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added), "removed": list(self.removed), "changed": list(self.changed),
            "powered_added": list(self.powered_added), "powered_removed": list(self.powered_removed),
            "changes": [{**asdict(change), "action": change.action.name, "hosts": list(change.hosts)}
                        for change in self.changes],
            "physical": [asdict(delta) for delta in self.physical],
            "largest": self.largest.name, "interrupted": list(self.interrupted),
            "disruptive": self.disruptive, "loses_jobs": self.loses_jobs, "loses_data": self.loses_data,
            "slurm_upgrade": self.slurm_upgrade,
        }
