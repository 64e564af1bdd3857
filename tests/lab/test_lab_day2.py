"""Day-two changes to a running lab while a 2-node checkpointing job runs (docs/operations.md, "Day two"): growing
from 2 to 4 compute nodes, a partition setting through `scontrol reconfigure`, a driver pin rolled through
the compute nodes one at a time, and shrinking back by a node that runs a job. One lab serves the four, in
order.

Every job that must outlast a change is held until the test releases it (the training job's HOLD_FILE, a file on
/shared): it cannot end before the change does, however long the change takes on a loaded machine.

slurmctld is never restarted: its systemd invocation stays the same. Its PID does change at every
`scontrol reconfigure`: SLURM 24.11 re-executes itself in place to reload (`Relinquishing control to new
slurmctld process`), which is what reconfigure is in that version (slurm-production: section 6)."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from clusterforge.target_kernel import blueprint_model
from tests.conftest import ROOT
from tests.lab.conftest import Lab, bring_up

pytestmark = pytest.mark.lab
NAME = f"cf-day2-{os.getpid()}"
CONTROLLER = "ctl-0001"
JOBS = "/shared/jobs"
BLUEPRINT = ROOT / "clusterforge/lab/data/blueprint.yaml"
DRIVER = blueprint_model().model_fields["software"].default.nvidia_driver  # the lab's blueprint pins none
BRANCH = DRIVER.split(".")[0]
NEW_DRIVER = f"{BRANCH}.{int(DRIVER.split('.')[1]) + 1}.01"  # a later release of the same branch
HOLDS = (f"/shared/hold/{os.getpid()}-{n}" for n in itertools.count())  # one release file per held job


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    yield from bring_up(NAME, "--boot", "push", "--nodes", "3")


def controller_unit(lab: Lab) -> dict[str, str]:
    """slurmctld's systemd unit: its invocation (new only when systemd starts it again) and main PID."""
    out = lab.sh(CONTROLLER, "systemctl show -p InvocationID -p MainPID -p NRestarts slurmctld")
    return dict(line.split("=", 1) for line in out.splitlines())


def submit(lab: Lab, steps: int = 10) -> tuple[str, str]:
    """The checkpointing training job of examples/jobs on two nodes, one step a second, held: it trains on past
    `steps` until the test creates its release file (`release`). The job's id and that file."""
    hold = next(HOLDS)
    lab.sh(CONTROLLER, f"mkdir -p {JOBS} /shared/out /shared/ckpt /shared/hold && "
                       "chmod 1777 /shared/out /shared/ckpt")
    for name in ("train.py", "train.sbatch"):
        text = (ROOT / "examples/jobs" / name).read_text()
        lab.sh(CONTROLLER, f"cat > {JOBS}/{name} <<'EOF'\n{text}EOF\nchmod 0755 {JOBS}/{name}")
    job = lab.sh(CONTROLLER, f"cd {JOBS} && sbatch --parsable -N2 --ntasks=2 "
                             f"--export=ALL,TOTAL_STEPS={steps},CKPT_EVERY=5,STEP_TIME=1,CKPT_DIR=/shared/ckpt,"
                             f"HOLD_FILE={hold},TRAIN_PY={JOBS}/train.py {JOBS}/train.sbatch")
    job = job.split(";")[0]
    lab.wait(f"job {job} running", lambda: lab.job(job).get("JobState") == "RUNNING", 90)
    assert lab.job(job)["NumNodes"] == "2", lab.job(job)
    return job, hold


def release(lab: Lab, hold: str) -> None:
    """Let a held job end (it does within a step once it is past its steps)."""
    lab.sh(CONTROLLER, f"touch {hold}")


def finished(lab: Lab, job: str, timeout: float) -> dict[str, str]:
    lab.wait(f"job {job} finished", lambda: lab.job(job).get("JobState") in ("COMPLETED", "FAILED", "CANCELLED"),
             timeout)
    return lab.job(job)


def blueprint(tmp_path: Path, **change: object) -> Path:
    data = yaml.safe_load(BLUEPRINT.read_text())
    if "max_time" in change:
        data["slurm"]["partitions"][0]["max_time"] = change["max_time"]
    if "driver" in change:
        data.setdefault("software", {})["nvidia_driver"] = change["driver"]
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_growing_from_two_to_four_compute_nodes_leaves_the_job_and_slurmctld_running(lab: Lab) -> None:
    job, hold = submit(lab)
    before = controller_unit(lab)
    nodes_before = lab.job(job)["NodeList"]

    grown = lab.cli("up", "--nodes", "5")
    print(*[line for line in grown.stdout.splitlines() if not line.startswith("[")], sep="\n")  # figures (-s)

    assert "node-[0003-0004]" in grown.stdout, grown.stdout
    assert lab.job(job).get("JobState") == "RUNNING", lab.job(job)  # not touched while the cluster grew
    after = controller_unit(lab)
    assert after["InvocationID"] == before["InvocationID"], (before, after)  # never stopped and started
    assert after["NRestarts"] == before["NRestarts"] == "0"
    states = lab.sh(CONTROLLER, "sinfo --noheader --Node --format '%N %T'")
    assert len(re.findall(r"^node-000[1-4] (idle|mixed|allocated)$", states, re.M)) == 4, states
    assert lab.sh(CONTROLLER, "srun -w node-0003,node-0004 -N2 hostname | sort") == "node-0003\nnode-0004"
    release(lab, hold)
    done = finished(lab, job, 240)
    assert done["JobState"] == "COMPLETED" and done["Restarts"] == "0" and done["NodeList"] == nodes_before, done


def test_a_partition_setting_reaches_slurmctld_through_reconfigure(lab: Lab, tmp_path: Path) -> None:
    job, hold = submit(lab)
    before = controller_unit(lab)

    changed = lab.cli("update", "--blueprint", str(blueprint(tmp_path, max_time="04:00:00")))
    print(*[line for line in changed.stdout.splitlines() if not line.startswith("[")], sep="\n")

    assert "rolling" not in changed.stdout, changed.stdout  # nothing to drain for a partition limit
    assert "MaxTime=04:00:00" in lab.sh(CONTROLLER, "scontrol show partition debug")
    after = controller_unit(lab)
    assert after["InvocationID"] == before["InvocationID"] and after["NRestarts"] == "0", (before, after)
    log = lab.sh(CONTROLLER, "tail -n 400 /var/log/slurm/slurmctld.log")
    assert "Relinquishing control to new slurmctld process" in log  # reconfigured: re-executed in place
    assert lab.job(job).get("JobState") == "RUNNING", lab.job(job)  # the re-executed slurmctld kept it
    release(lab, hold)
    done = finished(lab, job, 240)
    assert done["JobState"] == "COMPLETED" and done["Restarts"] == "0", done


def test_a_driver_pin_rolls_through_the_compute_nodes_one_at_a_time(lab: Lab, tmp_path: Path) -> None:
    job, hold = submit(lab)  # held through the whole roll: every node it runs on is drained under it in turn
    for node in COMPUTE:  # /run is a tmpfs: a reboot of the node (its container) clears it
        lab.sh(node, "touch /run/clusterforge-test-booted-before")

    rolled = lab.cli("update", "--blueprint", str(blueprint(tmp_path, max_time="04:00:00", driver=NEW_DRIVER)),
                     "--batch", "node", "--drain-timeout", "20", "--max-fraction", "0.25", timeout=1500)
    print(*[line for line in rolled.stdout.splitlines() if not line.startswith("[ ")], sep="\n")

    batches = re.findall(r"^\[(\d)/4\] node (node-\d{4}): ", rolled.stdout, re.M)
    assert [n for _, n in batches] and sorted(n for _, n in batches) == COMPUTE, rolled.stdout  # one at a time
    for node in COMPUTE:
        version = lab.sh(node, f"dpkg-query --show --showformat='${{Version}}' cuda-drivers-{BRANCH}")
        assert version.startswith(NEW_DRIVER), (node, version)
        assert lab.run(node, "test -e /run/clusterforge-test-booted-before").returncode == 1, f"{node} not rebooted"
    assert "0 failed" in rolled.stdout, rolled.stdout
    release(lab, hold)
    done = finished(lab, job, 420)
    assert done["JobState"] == "COMPLETED", done
    # requeued by the drain of a batch it ran in (at least the first of its two nodes), at most once a batch,
    # and each run after a requeue resumed from the checkpoint the one before it wrote
    assert 1 <= int(done["Restarts"]) <= len(COMPUTE), done
    resumes = re.findall(r" resume step=(\d+) ", lab.sh(CONTROLLER, f"cat /shared/ckpt/{job}/events.log"))
    assert len(resumes) == int(done["Restarts"]) and all(int(step) > 0 for step in resumes), resumes
    states = lab.sh(CONTROLLER, "sinfo --noheader --Node --format '%N %T'")
    assert not re.search(r"drain|down", states), states  # every node back in service


def test_shrinking_drains_the_removed_node_first_and_requeues_its_job(lab: Lab) -> None:
    others = "node-[0001-0003]"
    lab.sh(CONTROLLER, f"scontrol update NodeName={others} State=DRAIN Reason=test-placement")
    hold = next(HOLDS)  # held until the node is gone: it is running on node-0004 when the shrink drains it
    lab.sh(CONTROLLER, "mkdir -p /shared/hold")
    job = lab.sh(CONTROLLER, f"sbatch --parsable --requeue -N1 --wrap 'until [ -e {hold} ]; do sleep 1; done'"
                 ).split(";")[0]
    lab.wait(f"job {job} running", lambda: lab.job(job).get("JobState") == "RUNNING", 90)
    lab.sh(CONTROLLER, f"scontrol update NodeName={others} State=RESUME")
    assert lab.job(job)["NodeList"] == "node-0004"

    shrunk = lab.cli("up", "--nodes", "4", "--drain-timeout", "10")

    assert "retire node-0004: drain, then wait for their jobs" in shrunk.stdout, shrunk.stdout
    assert f"drain timeout: requeue job(s) {job}" in shrunk.stdout, shrunk.stdout
    assert "node-0004" not in lab.sh(CONTROLLER, "sinfo --noheader --Node --format %N")
    assert "node-0004" not in [n["name"] for n in lab.status()["nodes"]]
    release(lab, hold)
    done = finished(lab, job, 240)
    assert done["JobState"] == "COMPLETED" and done["Restarts"] == "1" and done["NodeList"] != "node-0004", done


COMPUTE = [f"node-000{i}" for i in range(1, 5)]
