"""Fault drills on a 4-node lab (1 controller + 3 compute), the failures a cluster of thousands sees daily:
a node that dies while it is being provisioned, a dead slurmd, and a controller re-imaged while jobs run
(docs/lab.md, "Fault drills"); then the product's own drills (`clusterforge lab drill`, docs/operations.md): the
telemetry sees every node, a node lost under a checkpointing job, a GPU fault remediated by a reboot, and a dead
exporter alerted on. A node drained by the health check is in test_lab.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT
from tests.lab.conftest import Lab, bring_up

pytestmark = pytest.mark.lab
NAME = f"cf-drill-{os.getpid()}"
CONTROLLER = "ctl-0001"
COMPUTE = ["node-0001", "node-0002", "node-0003"]
ALL = [CONTROLLER, *COMPUTE]
RECAP = re.compile(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    yield from bring_up(NAME, "--boot", "push", "--nodes", "4")


def recap(output: str) -> dict[str, tuple[int, int, int]]:
    """changed, unreachable, failed per host."""
    return {m[1]: (int(m[2]), int(m[3]), int(m[4])) for m in RECAP.finditer(output)}


def node_state(lab: Lab, node: str) -> str:
    return lab.sh(CONTROLLER, f"sinfo --noheader --Node --nodes {node} --format '%T'", check=False)


def munge_keys(lab: Lab) -> dict[str, str]:
    return {node: lab.sh(node, "md5sum < /etc/munge/munge.key") for node in ALL}


def wait_for_task(lab: Lab, since: float, prefix: str, timeout: float = 60) -> None:
    """Until the running playbook prints a task header starting with `prefix` (ansible-runner writes its output
    as it goes)."""
    from clusterforge.lab.paths import LabPaths

    artifacts = LabPaths.of(lab.name).runner_dir / "artifacts"

    def started() -> bool:
        runs = [d for d in artifacts.glob("*") if d.stat().st_mtime >= since and (d / "stdout").exists()]
        return any(f"TASK [{prefix}" in (d / "stdout").read_text(errors="replace") for d in runs)

    lab.wait(f"the playbook reached {prefix}", started, timeout)


def test_a_node_lost_during_provision_others_finish_and_a_rerun_converges(lab: Lab) -> None:
    keys = munge_keys(lab)
    for node in COMPUTE[:2]:  # drift that provisioning must repair on both, the lost node included
        lab.sh(node, "rm /etc/nccl.conf")
    since = time.time() - 1
    run = subprocess.Popen([sys.executable, "-m", "clusterforge", "lab", "provision", "--name", lab.name],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_task(lab, since, "munge")
    lab.cli("stop", COMPUTE[1])
    stdout, stderr = run.communicate(timeout=300)

    assert run.returncode == 1, stdout + stderr
    assert f"provisioning failed: {COMPUTE[1]} (unreachable)" in stderr
    assert f"stopped: {COMPUTE[1]}: `clusterforge lab start --name {lab.name}`" in stderr
    counts = recap(stdout)
    assert counts[COMPUTE[1]][1] == 1, stdout
    assert all(counts[n][1:] == (0, 0) for n in ALL if n != COMPUTE[1]), stdout
    assert "NCCL_IB_DISABLE=0" in lab.sh(COMPUTE[0], "cat /etc/nccl.conf")  # the others finished their work
    lab.wait(f"{COMPUTE[1]} marked down", lambda: node_state(lab, COMPUTE[1]).startswith("down"), timeout=90)

    assert f"started {COMPUTE[1]}" in lab.cli("start").stdout
    again = lab.cli("provision")
    counts = recap(again.stdout)
    assert counts[COMPUTE[1]][0] >= 1 and counts[COMPUTE[1]][1:] == (0, 0), again.stdout
    assert all(counts[n] == (0, 0, 0) for n in ALL if n != COMPUTE[1]), again.stdout
    assert "NCCL_IB_DISABLE=0" in lab.sh(COMPUTE[1], "cat /etc/nccl.conf")
    assert munge_keys(lab) == keys  # nothing lost: the same key everywhere
    lab.wait("every node idle", lambda: all(node_state(lab, n) == "idle" for n in COMPUTE), timeout=90)
    assert sorted(lab.sh(CONTROLLER, "srun -N3 hostname").split()) == COMPUTE


def test_a_dead_slurmd_is_marked_down_its_job_runs_on_the_others_and_provision_brings_it_back(lab: Lab) -> None:
    dead = COMPUTE[0]
    lab.sh(dead, "systemctl kill --signal=KILL slurmd")
    job_id = lab.sh(CONTROLLER, "sbatch --parsable -N2 --time=2 --wrap 'srun hostname'")
    waited = lab.wait(f"{dead} marked down", lambda: node_state(lab, dead).startswith("down"), timeout=120)
    print(f"{dead} was marked down {waited:.0f} s after slurmd was killed (SlurmdTimeout=30)")
    lab.wait(f"job {job_id} completed", lambda: lab.job(job_id)["JobState"] == "COMPLETED", timeout=120)
    finished = lab.job(job_id)
    assert finished["ExitCode"] == "0:0"
    assert lab.sh(CONTROLLER, f"scontrol show hostnames {finished['NodeList']}").split() == COMPUTE[1:]

    out = lab.cli("provision").stdout
    assert recap(out)[dead][0] >= 1, out  # slurmd started again
    lab.wait(f"{dead} back", lambda: node_state(lab, dead) == "idle", timeout=90)
    assert sorted(lab.sh(CONTROLLER, "srun -N3 hostname").split()) == COMPUTE


def test_the_controller_replaced_during_a_job_keeps_the_running_and_queued_jobs(lab: Lab) -> None:
    assert re.search(r"volumes/\S+-ctl-0001-state/", lab.sh(CONTROLLER, "findmnt -n -o SOURCE /var/spool/slurmctld"))
    # whole nodes: the lab's nodes have as many CPUs as this machine, so two 1-task jobs would share them. The
    # running one is held until released below: it is still running once the new controller has taken over.
    hold = f"/shared/hold-{os.getpid()}"
    running = lab.sh(CONTROLLER, "sbatch --parsable -N3 --exclusive --time=10 "
                                 f"--wrap 'srun sh -c \"until [ -e {hold} ]; do sleep 1; done\"'")
    queued = lab.sh(CONTROLLER, "sbatch --parsable -N3 --exclusive --time=2 --wrap 'srun hostname'")
    lab.wait(f"job {running} running", lambda: lab.job(running)["JobState"] == "RUNNING", timeout=60)
    started = lab.job(running)["StartTime"]

    lab.cli("replace", CONTROLLER)
    # a new system disk: no munge key, no slurmctld until provisioning
    assert lab.sh(CONTROLLER, "test -e /etc/munge/munge.key && echo key; systemctl is-active slurmctld; true") \
        == "inactive"
    # the lab's MPI check is a job too: it would queue behind the held one until that one's time limit
    out = lab.cli("provision", "-e", "slurm_verify_mpi=false").stdout
    assert recap(out)[CONTROLLER][0] > 0 and all(c[1:] == (0, 0) for c in recap(out).values()), out

    during = lab.job(running)
    assert during["JobState"] == "RUNNING" and during["StartTime"] == started, during
    assert lab.job(queued)["JobState"] == "PENDING", lab.job(queued)
    lab.sh(CONTROLLER, f"touch {hold}")
    lab.wait("both jobs completed", lambda: lab.job(queued)["JobState"] == "COMPLETED", timeout=120)
    first, second = lab.job(running), lab.job(queued)
    assert first["JobState"] == "COMPLETED" and first["Restarts"] == "0" and first["ExitCode"] == "0:0"
    assert second["ExitCode"] == "0:0" and second["StartTime"] >= first["EndTime"]


def drill(lab: Lab, name: str) -> dict:
    """`clusterforge lab drill NAME --format json`: its report (the figures are printed for the CI log)."""
    proc = lab.cli("drill", name, "--format", "json", check=False, timeout=900)
    report = json.loads(proc.stdout)
    print(f"{name}: {json.dumps(report['figures'])}")
    assert proc.returncode == (0 if report["ok"] else 1), proc.stderr
    return report


def timeouts(lab: Lab) -> dict[str, int]:
    from clusterforge.lab.drill_session import Session, settings

    return settings(Session(lab.name))


def test_every_node_is_a_scrape_target_and_up(lab: Lab) -> None:
    ip = next(n["ip"] for n in lab.status()["nodes"] if n["name"] == CONTROLLER)  # Prometheus runs there
    with urllib.request.urlopen(f"http://{ip}:9090/api/v1/targets?state=active", timeout=10) as response:
        targets = json.loads(response.read())["data"]["activeTargets"]
    node = {t["labels"]["instance"].split(":")[0]: t["health"] for t in targets if t["labels"]["job"] == "node"}
    assert node == dict.fromkeys(ALL, "up"), targets
    with urllib.request.urlopen(f"http://{ip}:9093/-/ready", timeout=10) as response:
        assert response.status == 200


def test_exporter_down_reaches_alertmanager_within_two_scrapes_and_for(lab: Lab) -> None:
    report = drill(lab, "exporter-down")
    assert report["ok"], report["failures"]
    limits = timeouts(lab)
    assert report["figures"]["alert_s"] <= 2 * limits["scrape_interval_s"] + limits["node_down_for_s"] + 2
    assert "cleared_after_restart_s" in report["figures"]


def test_node_loss_requeues_the_job_which_resumes_from_its_checkpoint(lab: Lab) -> None:
    report = drill(lab, "node-loss")
    assert report["ok"], report["failures"]
    figures, limits = report["figures"], timeouts(lab)
    assert figures["state"] == "COMPLETED" and figures["restarts"] == 1
    assert 0 <= figures["steps_lost"] < 10  # the job checkpoints every 10 steps
    assert figures["resumed_on"] != figures["node"]
    # stopping a node fires NodeDown within two scrape intervals plus the rule's for:
    assert figures["alert_s"] <= 2 * limits["scrape_interval_s"] + limits["node_down_for_s"] + 2
    # detection: SlurmdTimeout, plus up to one ping cycle (slurmctld pings every SlurmdTimeout/3; the drill's
    # expected figure names it), plus the ping's own wait and the drill's poll under load: 60.8 s was measured
    # for a 30-s SlurmdTimeout in a CI run with two labs on two cores
    assert figures["detect_s"] <= limits["slurmd_timeout_s"] * 4 / 3 + 30
    assert figures["resume_s"] <= figures["detect_s"] + limits["cred_expire_s"] + limits["sched_interval_s"] + 30
    assert lab.sh(CONTROLLER, "sinfo --noheader --Node --format '%N %T'").splitlines() == [
        f"{node} idle" for node in COMPUTE]


def test_gpu_fault_drains_alerts_reboots_and_returns_the_node(lab: Lab) -> None:
    report = drill(lab, "gpu-fault")
    assert report["ok"], report["failures"]
    figures = report["figures"]
    assert "clusterforge-health: gpu-xid (reboot): Xid 79" in figures["drain_reason"], figures
    assert figures["alert"] in ("GpuXidNeedsAction", "NodeHealthCheckFailing")
    assert figures["reboots"] == 1 and figures["fault_lines_after_reboot"] == "0"
    assert figures["drain_s"] < figures["reboot_ordered_s"] <= figures["rebooted_s"] < figures["returned_s"]
    assert figures["returned_s"] < 240
    node = figures["node"]
    state = lab.sh(CONTROLLER, "cat /var/lib/clusterforge/remediation.json")
    assert node in state  # the reboot is counted against the node's bound


def test_drills_left_the_cluster_whole(lab: Lab) -> None:
    assert lab.sh(CONTROLLER, "sinfo --noheader --Node --format '%N %T'").splitlines() == [
        f"{node} idle" for node in COMPUTE]
    assert sorted(lab.sh(CONTROLLER, "srun -N3 hostname").split()) == COMPUTE
