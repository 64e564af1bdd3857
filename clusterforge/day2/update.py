"""Apply a blueprint change to a running cluster in the order its diff asks for, without losing jobs.

1. Nodes the new blueprint drops are drained and emptied first (their jobs requeued after the drain timeout).
2. A SLURM version change: the accounting database and StateSaveLocation are backed up, then slurmdbd's hosts
   are upgraded, then the controllers (SLURM's documented order: slurmdbd, slurmctld, slurmd).
3. Every host whose change needs no drain gets site.yml in place: new nodes are provisioned, slurm.conf changes
   reach slurmctld through `scontrol reconfigure`, daemons restart where a setting asks for it. Running jobs
   go on.
4. Hosts whose change needs them idle (libraries, drivers, kernel modules) roll in batches (day2/rolling.py):
   drain, wait for their jobs up to the drain timeout, requeue what is left (when the blueprint lets jobs be
   requeued), apply, reboot where the change needs it, health-check, resume. A host that fails stays drained
   with the reason; the update stops once more hosts failed than the failure budget allows.
Each finished step and host is recorded (rolling.Progress); running the same update again goes on from there.

A change that loses queued or running jobs (diff class LOSE_JOBS: SelectType, SwitchType...) is refused unless
the operator accepts it (`Settings.accept_job_loss`, --accept-job-loss), having drained the cluster; accepted, it
is applied in place on every host at once, as rolling nodes would save no job from it. A change that loses stored
data (LOSE_DATA: a file system the deployment replaces, such as FSx for another deployment type) is refused the
same way unless accepted (--accept-data-loss); the deployment (`pulumi up`) replaces it, not this update.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.hostlist import compress
from clusterforge.day2.diff import Action, Diff
from clusterforge.day2.remote import Apply, Remote
from clusterforge.day2.rendered import Rendered, conf_entries
from clusterforge.day2.rolling import Batch, Progress, Unit, partitions, plan
from clusterforge.day2.slurmctl import Slurm
from clusterforge.render.change_classes import NAMED_LINES

Say = Callable[[str], None]
HEALTH = "/usr/local/sbin/clusterforge-health"  # health_script in roles/health/defaults/main.yml
BACKUP_DIR = "/var/backups/clusterforge"
# site.yml's closing MPI job needs two idle nodes: on a cluster with running work it would wait in the queue
IN_SERVICE = {"slurm_verify_mpi": False}


@dataclass(frozen=True)
class Settings:
    unit: Unit = "rack"
    max_fraction: float = 0.1
    drain_timeout_s: float = 600
    max_failures: int = 0
    poll_s: float = 5
    reboot_timeout_s: float = 900
    accept_job_loss: bool = False
    accept_data_loss: bool = False


@dataclass
class Report:
    batches: list[tuple[Batch, float]] = field(default_factory=list)  # each batch done and its seconds
    requeued: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # already done by an earlier, interrupted run

    @property
    def ok(self) -> bool:
        return not self.failed


def headline(diff: Diff) -> str:
    """One line for what a change is: nodes added and removed, settings, and the largest action."""
    added = f" ({compress(diff.added)})" if diff.added else ""
    removed = f" ({compress(diff.removed)})" if diff.removed else ""
    powered = "".join(f", {len(nodes)} power-saved node(s) {verb} ({compress(nodes)})" for verb, nodes in
                      (("added", diff.powered_added), ("removed", diff.powered_removed)) if nodes)
    return (f"change: {len(diff.added)} node(s) added{added}, {len(diff.removed)} removed{removed}{powered}, "
            f"{len(diff.changes)} setting(s) changed; largest action {diff.largest.name.lower()}, "
            f"{len(diff.interrupted)} running node(s) interrupted")


def job_loss_refusal(diff: Diff) -> list[str]:
    """What refusing a change that loses jobs says: each such change with its reason, then how to go on."""
    lines = [f"  {change.file}: {change.key}: {change.old} -> {change.new} ({change.daemon or 'all'}): {change.why}"
             for change in diff.job_loss]
    return ["this change loses queued or running jobs:", *dict.fromkeys(lines),
            f"update refused: drain the cluster ({len(diff.interrupted)} host(s)) and empty the queue, then run "
            f"it again with {ACCEPT_JOB_LOSS}"]


def relaunched(diff: Diff, new: Rendered) -> tuple[str, ...]:
    """The nodes a change replaces that no inventory lists (those slurmctld launches from a template, such as a
    cloud pool given another instance type): update rolls inventory hosts only, so these are left to the operator
    (docs/operations.md, "Cloud resources")."""
    return tuple(host for host in diff.hosts_at_least(Action.REIMAGE)
                 if host not in new.hosts and diff.node_action_for(host) >= Action.REIMAGE)


ACCEPT_JOB_LOSS = "--accept-job-loss"
ACCEPT_DATA_LOSS = "--accept-data-loss"


def data_loss_refusal(diff: Diff) -> list[str]:
    """What refusing a change that loses stored data says: each such change with its reason, then how to go on."""
    lines = [f"  {change.file}: {change.key}: {change.old or '(absent)'} -> {change.new or '(absent)'}: {change.why}"
             for change in diff.data_loss]
    return ["this change loses stored data (the file system is replaced or deleted, with every byte on it):",
            *dict.fromkeys(lines),
            f"update refused: copy what must survive (to S3: the data repository or the checkpoint bucket), then run "
            f"it again with {ACCEPT_DATA_LOSS}"]


def requeue_allowed(new: Rendered) -> bool:
    """JobRequeue in the new slurm.conf (slurm.recovery.job_requeue): whether draining may requeue jobs."""
    value = conf_entries(new.files.get("slurm/slurm.conf", ""), NAMED_LINES).entries.get("JobRequeue")
    return value != "0"


class Updater:
    def __init__(self, diff: Diff, new: Rendered, remote: Remote, apply: Apply, progress: Progress,
                 settings: Settings, say: Say) -> None:
        self.diff, self.new, self.remote, self.apply = diff, new, remote, apply
        self.progress, self.settings, self.say = progress, settings, say
        controllers = new.members("slurm_controller")
        if not controllers:
            raise ClusterforgeError(Problem("the new render has no slurm_controller host", "inventory/hosts.yml"))
        self.controller = controllers[0]
        self.slurm = Slurm(remote, self.controller)
        self.requeue = requeue_allowed(new)
        self.report = Report(skipped=list(progress.done))

    def run(self) -> Report:
        if self.diff.loses_data and not self.settings.accept_data_loss:
            raise ClusterforgeError(Problem(
                "the change loses stored data: " + ", ".join(dict.fromkeys(c.key for c in self.diff.data_loss)),
                self.diff.data_loss[0].file, hint=f"copy what must survive first, then accept it with "
                f"{ACCEPT_DATA_LOSS}"))
        if self.diff.loses_jobs and not self.settings.accept_job_loss:
            raise ClusterforgeError(Problem(
                "the change loses queued or running jobs: " + ", ".join(dict.fromkeys(
                    c.key for c in self.diff.job_loss)), "slurm.conf",
                hint=f"drain the cluster first, then accept it with {ACCEPT_JOB_LOSS}"))
        if self.progress.resumed:
            self.say(f"resuming: {len(self.progress.steps)} step(s) and {len(self.progress.done)} host(s) done")
        self._step("retire", self._retire, bool(self.diff.removed))
        if self.diff.slurm_upgrade:
            self._step("backup", self._backup, True)
            dbd = self.new.dbd_host
            self._step("upgrade slurmdbd", lambda: self._apply_in_place([dbd] if dbd else []), bool(dbd))
            controllers = list(self.new.members("slurm_controller"))
            self._step("upgrade slurmctld", lambda: self._apply_in_place(controllers), True)
        rolling = self.rolling_hosts()
        in_place = [h for h in self.new.hosts if h not in rolling]
        self._step("in place", lambda: self._apply_in_place(in_place), bool(in_place))
        self._roll([h for h in rolling if h not in self.progress.done])
        return self.report

    def rolling_hosts(self) -> list[str]:
        """Hosts that must be idle while they change: in both renders, with a DRAIN, REBOOT or REIMAGE (a change
        that loses jobs is applied in place: Diff.node_action_for)."""
        return [h for h in self.new.hosts
                if h not in self.diff.added and self.diff.node_action_for(h) >= Action.DRAIN]

    def batches(self, hosts: Sequence[str], busy: Iterable[str] | None = None) -> list[Batch]:
        """The rolling batches; `busy` (the nodes running jobs) is asked of slurmctld unless given."""
        host_vars = {h: self.new.hosts[h].vars for h in hosts}
        parts = partitions(self.new.files.get("slurm/slurm.conf", ""))
        running = self.slurm.busy() if busy is None else busy
        batches = plan(hosts, host_vars, parts, running, self.settings.unit, self.settings.max_fraction)
        # a controller that is also a compute node goes last: while it reboots nothing can be drained or resumed
        controllers = set(self.new.members("slurm_controller"))
        return sorted(batches, key=lambda b: bool(controllers & set(b.hosts)))

    def _step(self, name: str, action: Callable[[], None], needed: bool) -> None:
        if not needed or name in self.progress.steps:
            return
        started = time.monotonic()
        action()
        self.progress.step_done(name)
        self.say(f"{name}: done in {time.monotonic() - started:.1f}s")

    def _retire(self) -> None:
        removed = list(self.diff.removed)
        self.say(f"retire {compress(removed)}: drain, then wait for their jobs")
        known = self.slurm.nodes(removed)
        self.slurm.drain([h for h in removed if h in known], "retired by the new blueprint")
        self._empty([h for h in removed if h in known], pending=[])

    def _backup(self) -> None:
        """The accounting database and StateSaveLocation, copied before any daemon is upgraded (SLURM's upgrade
        guide: slurmdbd converts its tables and slurmctld its state files on first start, with no way back)."""
        stamp = time.strftime("%Y%m%dT%H%M%S")
        gv = self.new.group_vars
        dbd = str(gv.get("slurm_dbd_host") or "")
        if gv.get("slurm_accounting_enabled") and dbd:
            database = str(gv.get("slurm_dbd_database", "slurm_acct_db"))
            self._must(dbd, ["sh", "-c", f"mkdir -p {BACKUP_DIR} && mysqldump --single-transaction --databases "
                             f"{_word(database)} | gzip > {BACKUP_DIR}/{_word(database)}-{stamp}.sql.gz"])
            self.say(f"backup: {dbd}:{BACKUP_DIR}/{database}-{stamp}.sql.gz")
        state = str(gv.get("slurm_state_save_location", "/var/spool/slurmctld"))
        self._must(self.controller, ["sh", "-c", f"mkdir -p {BACKUP_DIR} && tar -C {_word(state)} -czf "
                                     f"{BACKUP_DIR}/statesave-{stamp}.tar.gz ."])
        self.say(f"backup: {self.controller}:{BACKUP_DIR}/statesave-{stamp}.tar.gz")

    def _must(self, host: str, argv: Sequence[str]) -> None:
        result = self.remote.run(host, argv, timeout=3600)
        if result.rc != 0:
            raise ClusterforgeError(Problem(f"`{argv[-1]}` failed: {(result.stderr or result.stdout).strip()[-300:]}",
                                            host, hint="nothing was upgraded; fix it and run the update again"))

    def _apply_in_place(self, hosts: Sequence[str]) -> None:
        self.say(f"site.yml on {len(hosts)} host(s) in service: {compress(hosts)}")
        outcome = self.apply(hosts, dict(IN_SERVICE))
        if not outcome.summary.ok:
            raise ClusterforgeError(outcome.problem("site.yml on the hosts in service"))

    def _roll(self, hosts: list[str]) -> None:
        if not hosts:
            return
        before = self.slurm.nodes(hosts)
        held = {h: s.reason for h, s in before.items() if s.drained_by_others}
        batches = self.batches(hosts)
        self.say(f"rolling {len(hosts)} host(s) in {len(batches)} batch(es): " + "; ".join(map(str, batches[:6]))
                 + (" ..." if len(batches) > 6 else ""))
        pending = list(hosts)
        for index, batch in enumerate(batches, 1):
            started = time.monotonic()
            self.say(f"[{index}/{len(batches)}] {batch}")
            failures = self._batch(batch, [h for h in pending if h not in batch.hosts], held)
            pending = [h for h in pending if h not in batch.hosts]
            self.progress.hosts_done(h for h in batch.hosts if h not in failures)
            if failures:
                self.progress.hosts_failed(failures)
                self.report.failed.update(failures)
                for host, why in failures.items():
                    self.say(f"  FAILED {host}: {why} (left drained)")
            self.report.batches.append((batch, time.monotonic() - started))
            self.say(f"  done in {time.monotonic() - started:.1f}s")
            if len(self.report.failed) > self.settings.max_failures:
                raise ClusterforgeError(Problem(
                    f"{len(self.report.failed)} host(s) failed, more than the failure budget "
                    f"({self.settings.max_failures}); stopped before {len(batches) - index} batch(es)",
                    compress(self.report.failed), hint="fix them, then run the update again: it resumes"))

    def _batch(self, batch: Batch, pending: list[str], held: dict[str, str]) -> dict[str, str]:
        hosts = list(batch.hosts)
        action = max(self.diff.node_action_for(h) for h in hosts)
        self.slurm.drain(hosts, f"{action.name.lower()} for a blueprint change")
        if not self._empty(hosts, pending):
            self.slurm.resume([h for h in hosts if h not in held])
            return dict.fromkeys(hosts, "jobs still running after the drain timeout and requeue is off")
        outcome = self.apply(hosts, dict(IN_SERVICE))
        failures = {h: "site.yml: " + (outcome.summary.hosts[h].errors or ["failed"])[0][:200]
                    for h in outcome.summary.failed_hosts if h in hosts}
        ok = [h for h in hosts if h not in failures]
        if action >= Action.REBOOT and ok:
            failures |= self._reboot(ok)
            ok = [h for h in ok if h not in failures]
        failures |= self._health(ok)
        self.slurm.resume([h for h in ok if h not in failures and h not in held])
        for host in hosts:
            if host in held:
                self.slurm.hold(host, held[host])
        return failures

    def _empty(self, hosts: Sequence[str], pending: list[str]) -> bool:
        """Wait until no job holds these nodes; after the drain timeout, requeue what is left (and drain the other
        not-yet-updated nodes of those jobs, so they restart on nodes already done). False: jobs remain."""
        deadline = time.monotonic() + self.settings.drain_timeout_s
        requeued = False
        while True:
            jobs = self.slurm.jobs_on(hosts)
            if not jobs:
                return True
            if time.monotonic() >= deadline and not requeued:
                if not self.requeue:
                    return False
                ahead = sorted({n for nodes in jobs.values() for n in nodes if n in pending})
                if ahead:
                    self.slurm.drain(ahead, "queued for a blueprint change")
                self.say(f"  drain timeout: requeue job(s) {', '.join(jobs)}"
                         + (f" (their nodes {compress(ahead)} wait drained for their turn)" if ahead else ""))
                self.slurm.requeue(sorted(jobs))
                self.report.requeued.extend(jobs)
                requeued = True
                deadline = time.monotonic() + max(60.0, self.settings.drain_timeout_s)
            elif requeued and time.monotonic() >= deadline:
                return False
            time.sleep(self.settings.poll_s)

    def _reboot(self, hosts: list[str]) -> dict[str, str]:
        self.slurm.reboot(hosts, "reboot for a blueprint change")
        deadline = time.monotonic() + self.settings.reboot_timeout_s
        waiting = set(hosts)
        while waiting and time.monotonic() < deadline:
            time.sleep(self.settings.poll_s)
            try:
                states = self.slurm.nodes(waiting)
            except ClusterforgeError:  # the controller's own node rebooting: slurmctld is back after its boot
                continue
            waiting -= {h for h, s in states.items() if s.state == "down" and not s.rebooting}
        return dict.fromkeys(sorted(waiting), f"not back within {self.settings.reboot_timeout_s:.0f}s of the reboot")

    def _health(self, hosts: list[str]) -> dict[str, str]:
        failures = {}
        for host in hosts:
            result = self.remote.run(host, [HEALTH, "--check"], timeout=300)
            if result.rc != 0:
                output = (result.stdout + result.stderr).strip()[-200:]
                failures[host] = "health check: " + (output or f"exit {result.rc}")
        return failures


def _word(text: str) -> str:
    """A path or name from the render, refused if it is not a plain word (it reaches `sh -c`)."""
    if not re.fullmatch(r"[A-Za-z0-9_./-]+", text):
        raise ClusterforgeError(Problem(f"{text!r} is not a plain path or name", "group_vars"))
    return text
