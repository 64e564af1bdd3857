"""Reconcile: the controller's timer that makes instances and slurmctld agree, once a minute.

- An instance that failed its status check (EC2's; a lab container that died), whose node remediation gave up
  on, or whose node slurmctld marked DOWN for not responding (a hung server the BMC still reports On; an instance
  whose slurmd died), is terminated and its node powered down with its jobs requeued: the next resume gives it a
  new instance, or powers the server on afresh.
- An instance whose node slurmctld holds powered down (suspend failed or was lost), or whose node is in no group,
  is an orphan: terminated.
- A node resume left DOWN for lack of capacity returns to slurmctld after `insufficient_capacity_timeout_s`, so
  capacity is asked again, not at once in a loop.
- A static node (pools[].count) that is powered down is powered up.
A node powering up or down is left alone: its instance may not be visible yet (DescribeInstances is eventually
consistent) and slurmctld's ResumeTimeout owns it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from clusterforge.core import hostlist
from clusterforge.powersave.config import PowerSaveConfig
from clusterforge.powersave.provider import Instance, Provider
from clusterforge.powersave.slurm import RECONCILE_PREFIX, REMEDIATION_GAVE_UP, RESUME_PREFIX, Slurm

NOT_RESPONDING = "Not responding"  # slurmctld's own reason for a node whose slurmd stopped answering (DOWN*)


@dataclass
class Reconciled:
    replaced: dict[str, str] = field(default_factory=dict)  # node -> why
    orphans: list[Instance] = field(default_factory=list)
    retried: list[str] = field(default_factory=list)
    powered_up: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        lines = []
        by_reason: dict[str, list[str]] = {}
        for node, why in self.replaced.items():
            by_reason.setdefault(why, []).append(node)
        lines += [f"reconcile: replacing {len(n)} ({why}): {hostlist.compress(n)}" for why, n in by_reason.items()]
        if self.orphans:
            lines.append(f"reconcile: terminated {len(self.orphans)} orphan instances: "
                         f"{', '.join(i.id for i in self.orphans[:10])}{' ...' if len(self.orphans) > 10 else ''}")
        if self.retried:
            lines.append(f"reconcile: {len(self.retried)} nodes back to slurmctld after the capacity timeout: "
                         f"{hostlist.compress(self.retried)}")
        if self.powered_up:
            lines.append(f"reconcile: powering up {len(self.powered_up)} static nodes: "
                         f"{hostlist.compress(self.powered_up)}")
        return lines or ["reconcile: nothing to do"]


def _replace(provider: Provider, slurm: Slurm, doomed: Sequence[Instance], why: str, done: Reconciled) -> None:
    if not doomed:
        return
    provider.terminate(doomed)
    slurm.power_down([i.node for i in doomed], f"{RECONCILE_PREFIX} replacing: {why}")
    done.replaced.update({i.node: why for i in doomed})


def reconcile(config: PowerSaveConfig, provider: Provider, slurm: Slurm, now: datetime) -> Reconciled:
    done = Reconciled()
    states = slurm.nodes()
    live = provider.everything()
    impaired = {i.id for i in provider.impaired()}
    _replace(provider, slurm, [i for i in live if i.id in impaired], "failed its status check", done)
    gave_up = [i for i in live if i.id not in impaired
               and states.get(i.node) is not None and states[i.node].reason.startswith(REMEDIATION_GAVE_UP)]
    _replace(provider, slurm, gave_up, "remediation gave up on it", done)
    handled = impaired | {i.id for i in gave_up}
    silent = [i for i in live if i.id not in handled and (s := states.get(i.node)) is not None and s.down
              and s.reason.startswith(NOT_RESPONDING) and not s.powered_down]
    _replace(provider, slurm, silent, "not responding", done)
    handled |= {i.id for i in silent}
    for instance in live:
        if instance.id in handled:
            continue
        state = states.get(instance.node)
        in_group = config.group_of(instance.node) is not None
        if not in_group or (state is not None and state.powered_down and not state.powering):
            done.orphans.append(instance)
    if done.orphans:
        provider.terminate(done.orphans)
    timeout = timedelta(seconds=config.insufficient_capacity_timeout_s)
    done.retried = sorted(n for n, s in states.items() if s.down and s.reason.startswith(RESUME_PREFIX)
                          and (s.reason_at is None or now - s.reason_at >= timeout))
    if done.retried:
        slurm.power_down(done.retried, f"{RECONCILE_PREFIX} capacity asked again after "
                                       f"{config.insufficient_capacity_timeout_s} s")
    static = {n for g in config.groups for n in g.static_members}
    done.powered_up = sorted(n for n, s in states.items() if n in static and s.powered_down and not s.powering
                             and not s.down and n not in done.replaced)
    if done.powered_up:
        slurm.power_up(done.powered_up)
    return done
