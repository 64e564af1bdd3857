"""SLURM as a day-two change sees it: node states, the jobs on a set of nodes, drain, requeue, reboot, resume.

Every call is one `scontrol`, `sinfo` or `squeue` on the controller, given as an argument list (no shell): host
names come from the rendered inventory and reasons from this module, so nothing here is parsed by a shell.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.hostlist import compress, expand
from clusterforge.day2.remote import Remote

REASON = "clusterforge-update:"  # every reason this tool sets starts so; others' drains are left as they are
ACTIVE_JOB_STATES = "RUNNING,COMPLETING,CONFIGURING,SUSPENDED,STOPPED"


@dataclass(frozen=True)
class NodeState:
    name: str
    state: str  # sinfo's long state, lower case: idle, mixed, allocated, drained, draining, down*, reboot^ ...
    reason: str

    @property
    def responding(self) -> bool:
        return not self.state.endswith("*")

    @property
    def drained_by_others(self) -> bool:
        """Out of service for a reason of someone else's (an operator, the health check): left so afterwards."""
        out = any(word in self.state for word in ("drain", "down", "fail"))
        return out and not self.reason.startswith(REASON)

    @property
    def rebooting(self) -> bool:
        """A reboot asked for or under way (`reboot^`, `reboot_issued`, `@`-suffixed states)."""
        return "reboot" in self.state or "@" in self.state


class Slurm:
    """The cluster's SLURM through its controller."""

    def __init__(self, remote: Remote, controller: str) -> None:
        self.remote = remote
        self.controller = controller

    def _run(self, argv: Sequence[str], timeout: float = 60) -> str:
        result = self.remote.run(self.controller, argv, timeout)
        if result.rc != 0:
            raise ClusterforgeError(Problem(
                f"`{' '.join(argv)}` failed (exit {result.rc}): {(result.stderr or result.stdout).strip()[-300:]}",
                self.controller, hint="the cluster is as the last completed step left it; run the update again "
                "to resume"))
        return result.stdout

    def nodes(self, hosts: Iterable[str]) -> dict[str, NodeState]:
        """The states of these nodes as slurmctld has them (nodes it does not know are absent)."""
        names = list(hosts)
        if not names:
            return {}
        out = self._run(["sinfo", "--noheader", "--Node", "--nodes", compress(names), "--format", "%N|%T|%E"])
        found: dict[str, NodeState] = {}
        for line in out.splitlines():
            name, _, rest = line.partition("|")
            state, _, reason = rest.partition("|")
            if name:
                found[name] = NodeState(name, state.strip().lower(), "" if reason.strip() == "none" else reason.strip())
        return found

    def jobs_on(self, hosts: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Active jobs that hold any of these nodes: job id -> every node the job holds."""
        names = list(hosts)
        if not names:
            return {}
        out = self._run(["squeue", "--noheader", "--nodelist", compress(names), "--states", ACTIVE_JOB_STATES,
                         "--format", "%A|%N"])
        jobs: dict[str, tuple[str, ...]] = {}
        for line in out.splitlines():
            job, _, nodelist = line.partition("|")
            if job.strip():
                jobs[job.strip()] = tuple(expand(nodelist.strip())) if nodelist.strip() else ()
        return jobs

    def busy(self) -> set[str]:
        """Every node that runs a job now."""
        out = self._run(["squeue", "--noheader", "--states", ACTIVE_JOB_STATES, "--format", "%N"])
        return {name for line in out.splitlines() if line.strip() for name in expand(line.strip())}

    def drain(self, hosts: Sequence[str], why: str) -> None:
        """No new job starts on these nodes; running ones go on."""
        self._run(["scontrol", "update", f"NodeName={compress(hosts)}", "State=DRAIN", f"Reason={REASON} {why}"])

    def hold(self, host: str, reason: str) -> None:
        """Back out of service with the reason someone else gave (the update changed the node meanwhile)."""
        self._run(["scontrol", "update", f"NodeName={host}", "State=DRAIN", f"Reason={reason or 'held'}"])

    def resume(self, hosts: Sequence[str]) -> None:
        if hosts:
            self._run(["scontrol", "update", f"NodeName={compress(hosts)}", "State=RESUME"])

    def requeue(self, jobs: Sequence[str]) -> None:
        """Back to the queue (the job restarts from its checkpoint elsewhere); `scontrol requeue` refuses a job
        submitted with --no-requeue, which is then reported, not cancelled."""
        self._run(["scontrol", "requeue", ",".join(jobs)])

    def reboot(self, hosts: Sequence[str], why: str) -> None:
        """SLURM's own reboot (RebootProgram on each node): the node comes back DOWN with our reason, so the
        health check decides whether it returns to service."""
        self._run(["scontrol", "reboot", "nextstate=DOWN", f"reason={REASON} {why}", compress(hosts)])

    def reconfigure(self) -> None:
        self._run(["scontrol", "reconfigure"], timeout=300)
