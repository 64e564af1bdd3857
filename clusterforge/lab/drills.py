"""Failure drills on a running lab: inject one failure the way it happens on a real cluster and measure how the
cluster detects it, recovers and resumes. `clusterforge lab drill NAME` runs one and reports its figures.

Every drill restores what it broke (a stopped node is powered on again, an exporter restarted) and polls the
controller, the jobs' event logs and Alertmanager's API every half second, so its times are accurate to about
0.5 s. The expected figures follow from the blueprint's timeouts (`expected` in each result); docs/operations.md
explains them.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab import cluster, nodes
from clusterforge.lab.drill_session import (
    ALERTS,
    CKPT_DIR,
    JOBS_DIR,
    POLL,
    XID_79,
    Result,
    Session,
    events,
    example_jobs,
    idle,
    node_down_alert,
    restart_count,
    settings,
    targets_up,
)
from clusterforge.lab.labvars import KERNEL_LOG_FILE

HOLD_DIR = "/shared/hold"  # the files the drills' held jobs wait for (release_file)


def release_file(session: Session, node: str) -> str:
    """A file on /shared that a held job waits for (train.py's HOLD_FILE, or a drill's own loop), in a folder made
    here: the drill makes the file once the failure is over, so the job cannot end before the failure reaches
    it."""
    session.sh(node, f"mkdir -p {HOLD_DIR}")
    return f"{HOLD_DIR}/release-{secrets.token_hex(4)}"


def node_loss(session: Session, total_steps: int = 60, every: int = 10, kill_at: int = 27) -> Result:
    """Power off the node a checkpointing training job runs on (no shutdown: every process dies at once). SLURM
    must mark it DOWN, requeue the job, and the job must resume on another node from its last checkpoint and
    finish, recomputing fewer than one checkpoint interval of steps. The job is held (it trains on past
    `total_steps`) until it has resumed, so it cannot finish before the node is lost, however slow the host."""
    result = Result("node-loss")
    ready = [n for n in session.compute() if idle(session, n)]
    if len(ready) < 2:
        raise ClusterforgeError(Problem(f"node-loss needs two idle compute nodes, the lab has {ready or 'none'}",
                                        "lab drill", hint="clusterforge lab start; wait until they are idle"))
    source = example_jobs()
    session.sh(session.controller, f"mkdir -p {JOBS_DIR} /shared/out {CKPT_DIR} && chmod 1777 /shared/out {CKPT_DIR}")
    for name in ("train.py", "train.sbatch"):
        text = (source / name).read_text()
        session.sh(session.controller, f"cat > {JOBS_DIR}/{name} <<'CLUSTERFORGE_EOF'\n{text}CLUSTERFORGE_EOF\n"
                                       f"chmod 0755 {JOBS_DIR}/{name}")
    hold = release_file(session, session.controller)
    job = session.sh(session.controller, f"cd {JOBS_DIR} && sbatch --parsable --export=ALL,TOTAL_STEPS={total_steps},"
                                         f"CKPT_EVERY={every},STEP_TIME=1,CKPT_DIR={CKPT_DIR},HOLD_FILE={hold},"
                                         f"TRAIN_PY={JOBS_DIR}/train.py {JOBS_DIR}/train.sbatch").split(";")[0]
    result.figures["job"] = job
    victim = ""
    try:
        deadline = time.monotonic() + 180
        while not any(kind == "step" and step >= kill_at for _, kind, step, _ in events(session, job)):
            if time.monotonic() > deadline:
                raise ClusterforgeError(Problem(f"job {job} did not reach step {kill_at} in 180 s: "
                                                f"{session.job(job).get('JobState')}", "lab drill"))
            time.sleep(POLL)
        victim = session.job(job).get("NodeList", "")
        session.start(result)
        cluster.power(session.paths, [victim], on=False, say=lambda _: None)
        session.mark(f"powered off {victim} (job {job} at step >= {kill_at})")
        result.figures["node"] = victim
        _node_loss_recovery(session, result, job, victim, hold, every)
    finally:
        session.sh(session.controller, f"touch {hold}", check=False)  # a drill cut short leaves no job running
        if victim:
            cluster.power(session.paths, [victim], on=True, say=lambda _: None)
            session.mark(f"powered on {victim}")
            session.until(f"{victim} idle again", lambda: idle(session, victim), 120)
    return result


def _node_loss_recovery(session: Session, result: Result, job: str, victim: str, hold: str, every: int) -> None:
    """What node-loss measures once the node is off: the alert, SLURM's detection, the requeue and the resume,
    then (the job released) its completion and the steps it recomputed."""
    limits = settings(session)
    bound = 2 * limits["scrape_interval_s"] + limits["node_down_for_s"]
    seen = session.watch({
        "NodeDown in Alertmanager": lambda: session.alert_for(victim, ("NodeDown",)) is not None,
        f"{victim} DOWN in SLURM": lambda: session.node_state(victim)[0].startswith("down"),
        f"job {job} requeued": lambda: session.job(job).get("Restarts", "0") not in ("0", ""),
        f"job {job} resumed": lambda: any(kind == "resume" and t > session.t0
                                          for t, kind, _, _ in events(session, job)),
    }, 300)
    alert, down, requeued, _ = seen.values()
    session.sh(session.controller, f"touch {hold}")
    session.mark(f"released job {job}")
    done = session.until(f"job {job} completed", lambda: session.job(job).get("JobState") in (
        "COMPLETED", "FAILED", "CANCELLED", "NODE_FAIL", "TIMEOUT"), 300)
    final = session.job(job)
    log = events(session, job)
    resume = next((e for e in log if e[1] == "resume" and e[0] > session.t0), None)
    # the last step the lost node completed: everything it logged before the job resumed elsewhere
    last_step = max((step for t, kind, step, host in log if kind == "step" and host == victim
                     and (resume is None or t < resume[0])), default=0)
    result.figures |= {
        "last_step_before_loss": last_step, "state": final.get("JobState", "?"),
        "restarts": int(final.get("Restarts", "0") or 0)}
    if alert is not None:
        node_down_alert(result, alert, bound)
    if down is not None:
        result.figures["detect_s"] = round(down, 1)
    if requeued is not None:
        result.figures["requeue_s"] = round(requeued, 1)
    if resume is not None:
        result.figures |= {"resume_s": round(resume[0] - session.t0, 1), "resumed_from_step": resume[2],
                           "resumed_on": resume[3], "steps_lost": last_step - resume[2]}
    if done is not None:
        result.figures["completed_s"] = round(done, 1)
    result.expected = {
        "alert_s": f"<= 2 x scrape_interval + for: = {bound} s",
        "detect_s": f"about SlurmdTimeout ({limits['slurmd_timeout_s']} s) plus up to one ping cycle",
        "resume_s": (f"detect + cred_expire ({limits['cred_expire_s']} s) + up to sched_interval "
                     f"({limits['sched_interval_s']} s) + job start"),
        "steps_lost": f"fewer than one checkpoint interval ({every})"}
    if final.get("JobState") != "COMPLETED":
        result.failures.append(f"job {job} ended {final.get('JobState')}, not COMPLETED")
    if result.figures["restarts"] != 1:
        result.failures.append(f"job {job} restarted {result.figures['restarts']} times, not once")
    lost = result.figures.get("steps_lost")
    if not isinstance(lost, int) or not 0 <= lost < every:
        result.failures.append(f"steps lost {lost}: not within one checkpoint interval ({every})")
    if resume is not None and resume[3] == victim:
        result.failures.append(f"resumed on {victim}, the node that was powered off")


def gpu_fault(session: Session, node: str | None = None) -> Result:
    """Write a Xid 79 line where the lab's health check reads the kernel log. The health check must drain the node
    with the gpu-xid reason, an alert must reach Alertmanager, the remediation must reboot the node (a container
    restart: /run, and the fault with it, starts empty), and the node must come back idle by itself."""
    result = Result("gpu-fault")
    limits = settings(session)
    victim = node or next((n for n in reversed(session.compute()) if idle(session, n)), "")
    if not victim:
        raise ClusterforgeError(Problem("gpu-fault needs an idle compute node", "lab drill"))
    restarts_before = restart_count(session, victim)
    session.start(result)
    session.sh(victim, f"mkdir -p {Path(KERNEL_LOG_FILE).parent} && echo '[{time.time():.0f}] {XID_79}' "
                       f">> {KERNEL_LOG_FILE}")
    session.mark(f"Xid 79 written to {victim}:{KERNEL_LOG_FILE}")
    result.figures["node"] = victim

    reasons: list[str] = []

    def drained() -> bool:
        base, reason = session.node_state(victim)
        # the health check's reason, or remediation's that quotes it once the reboot is ordered
        if ("drain" in base or "reboot" in base) and "clusterforge-health: gpu-xid" in reason:
            reasons.append(reason)
            return True
        return False

    alerts: list[str] = []

    def alerted() -> bool:
        name = session.alert_for(victim, ALERTS)
        if name:
            alerts.append(name)
        return name is not None

    def reboot_ordered() -> bool:
        base, reason = session.node_state(victim)
        return "reboot" in base or reason.startswith("clusterforge-remediate: reboot") \
            or restart_count(session, victim) > restarts_before

    seen = session.watch({
        f"{victim} drained (gpu-xid)": drained,
        "alert in Alertmanager": alerted,
        "reboot ordered by remediation": reboot_ordered,
        f"{victim} rebooted": lambda: restart_count(session, victim) > restarts_before,
    }, limits["health_check_interval_s"] * 2 + limits["remediation_interval_s"] * 2
        + limits["resume_timeout_s"])
    drain, alert_at, issued, rebooted = seen.values()
    if rebooted is not None:
        nodes.close_ssh(session.paths, [victim])  # the old connection died with the old container
        nodes.wait_booted(session.paths, [victim])
    returned = session.until(f"{victim} back in service", lambda: idle(session, victim),
                             limits["resume_timeout_s"] + limits["health_check_interval_s"])
    fault_left = session.sh(victim, f"grep -c Xid {KERNEL_LOG_FILE} 2>/dev/null || true", check=False) or "0"
    result.figures |= {"drain_reason": reasons[0] if reasons else "", "alert": alerts[0] if alerts else "",
                       "reboots": restart_count(session, victim) - restarts_before,
                       "fault_lines_after_reboot": fault_left}
    for key, value in (("drain_s", drain), ("alert_s", alert_at), ("reboot_ordered_s", issued),
                       ("rebooted_s", rebooted), ("returned_s", returned)):
        if value is not None:
            result.figures[key] = round(value, 1)
    result.expected = {
        "drain_s": f"within HealthCheckInterval ({limits['health_check_interval_s']} s) or the next job's prolog",
        "reboot_ordered_s": f"drain + up to the remediation interval ({limits['remediation_interval_s']} s)",
        "reboots": 1}
    if result.figures["reboots"] != 1:
        result.failures.append(f"{victim} was rebooted {result.figures['reboots']} times, not once")
    if fault_left != "0":
        result.failures.append(f"the injected fault survived the reboot ({fault_left} lines)")
    return result


def exporter_down(session: Session, node: str | None = None) -> Result:
    """Stop the node exporter on a compute node: NodeDown must reach Alertmanager within two scrape intervals plus
    the rule's `for:`, and clear once the exporter is back."""
    result = Result("exporter-down")
    limits = settings(session)
    victim = node or session.compute()[0]
    bound = 2 * limits["scrape_interval_s"] + limits["node_down_for_s"]
    scraped = targets_up(session)
    result.figures["targets_up_before"] = f"{sum(scraped.values())}/{len(scraped)}"
    session.start(result)
    session.sh(victim, "systemctl stop prometheus-node-exporter")
    session.mark(f"node exporter stopped on {victim}")
    try:
        fired = session.until("NodeDown in Alertmanager", lambda: session.alert_for(victim, ("NodeDown",))
                              is not None, bound + 60)
    finally:
        session.sh(victim, "systemctl start prometheus-node-exporter")
        restarted = session.mark(f"node exporter started on {victim}")
    cleared = session.until("NodeDown cleared", lambda: session.alert_for(victim, ("NodeDown",)) is None, 120)
    if fired is not None:
        node_down_alert(result, fired, bound)
    if cleared is not None:
        result.figures["cleared_after_restart_s"] = round(cleared - restarted, 1)
    result.expected = {"alert_s": f"<= 2 x scrape_interval ({limits['scrape_interval_s']} s) + for: "
                                  f"({limits['node_down_for_s']} s) = {bound} s"}
    if scraped and not all(scraped.values()):
        result.failures.append("scrape targets down before the drill: " + ", ".join(
            t for t, up in scraped.items() if not up))
    return result


def controller_failover(session: Session) -> Result:
    """Power off the primary controller while a job runs (`lab up --ha`): the backup must take control, the
    running job must finish, a new job must be scheduled, and the primary must take over again once it is back.
    The running job is held until the new one has run, so it is still running when the primary goes and after."""
    result = Result("controller-failover")
    controllers = [n.name for n in session.lab.in_group("slurm_controller")]
    if len(controllers) < 2:
        raise ClusterforgeError(Problem("controller-failover needs a backup controller", "lab drill",
                                        hint="bring the lab up with `clusterforge lab up --ha`"))
    primary, backup = controllers[0], controllers[1]
    # held until the new job has run under the backup: it is still running when the primary goes
    hold = release_file(session, backup)
    running = session.sh(backup, "sbatch --parsable -N1 --time=5 "
                                 f"--wrap 'srun sh -c \"until [ -e {hold} ]; do sleep 1; done\"'").split(";")[0]
    try:
        return _failover(session, result, primary, backup, running, hold)
    finally:
        session.sh(backup, f"touch {hold}", check=False)  # a drill cut short leaves no job running


def _failover(session: Session, result: Result, primary: str, backup: str, running: str, hold: str) -> Result:
    """controller-failover from the running (held) job on: the power cut, the takeover, a new job under the
    backup, the held job released and finished, and the primary back in control."""
    deadline = time.monotonic() + 60
    while session.job(running).get("JobState") != "RUNNING":
        if time.monotonic() > deadline:
            raise ClusterforgeError(Problem(f"job {running} did not start", "lab drill"))
        time.sleep(POLL)
    # The power cut loses what the primary has not saved yet: wait until its saved state has the running job
    # (slurmctld saves a change within seconds), as an operator would not pull a controller mid-write either.
    started = session.job(running).get("StartTime", "")
    location = session.sh(primary, "scontrol show config | sed -n 's/^StateSaveLocation *= *//p'")
    session.sh(primary, f"for i in $(seq 60); do test $(stat -c %Y {location}/job_state) -gt "
                        f"$(date -d {started} +%s) && exit 0; sleep 0.5; done; exit 1")
    session.controller = backup  # ask the backup from now on: the primary is about to go
    session.start(result)
    cluster.power(session.paths, [primary], on=False, say=lambda _: None)
    session.mark(f"powered off {primary} (job {running} running)")
    try:
        def backup_in_control() -> bool:
            out = session.sh(backup, "scontrol ping", check=False)
            return f"(backup) at {backup} is UP" in out and f"(primary) at {primary} is DOWN" in out

        took_over = session.until(f"{backup} answers, {primary} down", backup_in_control, 120)
        new = session.sh(backup, "sbatch --parsable -N1 --time=2 --wrap 'srun hostname'", check=False).split(";")[0]
        scheduled = session.until(f"new job {new} completed", lambda: session.job(new).get("JobState") == "COMPLETED",
                                  180)
        session.sh(backup, f"touch {hold}")
        session.mark(f"released job {running}")
        survived = session.until(f"job {running} completed", lambda: session.job(running).get("JobState") in (
            "COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"), 180)
        alert_at = session.until("SlurmBackupControllerInControl in Alertmanager", lambda: any(
            a.get("labels", {}).get("alertname") == "SlurmBackupControllerInControl" for a in session.alerts()), 180)
        alert = "SlurmBackupControllerInControl" if alert_at is not None else ""
        first = session.job(running)
        result.figures |= {"running_job": running, "running_job_state": first.get("JobState", "?"),
                           "running_job_restarts": int(first.get("Restarts", "0") or 0), "new_job": new,
                           "alert": alert}
        for key, value in (("takeover_s", took_over), ("new_job_done_s", scheduled),
                           ("running_job_done_s", survived), ("alert_s", alert_at)):
            if value is not None:
                result.figures[key] = round(value, 1)
        if first.get("JobState") != "COMPLETED" or first.get("Restarts") not in ("0", None):
            result.failures.append(f"the running job ended {first.get('JobState')} with "
                                   f"{first.get('Restarts')} restarts")
    finally:
        cluster.power(session.paths, [primary], on=True, say=lambda _: None)
        session.mark(f"powered on {primary}")
        session.controller = primary
    back = session.until(f"{primary} in control again", lambda: f"(primary) at {primary} is UP" in session.sh(
        backup, "scontrol ping", check=False), 180)
    if back is not None:
        result.figures["primary_back_s"] = round(back, 1)
    return result


DRILLS: dict[str, Callable[[Session], Result]] = {
    "node-loss": node_loss,
    "gpu-fault": gpu_fault,
    "exporter-down": exporter_down,
    "controller-failover": controller_failover,
}
