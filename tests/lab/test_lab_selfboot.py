"""`lab up --boot self`: every node starts from the baked image and configures itself at boot; the control host
runs no Ansible against the nodes. A node whose boot phase fails is DRAIN with the failed step as its reason,
and its next good boot lifts that DRAIN. The lab's blueprint here adds pool `burst` of servers with BMCs (count 1,
max_count 3, `bmc: redfish`, clusterforge/lab/data/burst.yaml): SLURM's own power saving powers them on and off
through target onprem's Redfish provider, as it would real servers, against the lab's BMCs (sushy-tools' emulator),
whose power changes alone start and remove the containers; Prometheus scrapes exactly the burst nodes SLURM holds
powered up (the programs' file service discovery file)."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.lab.conftest import FIRST_START, Lab, bring_up, error_lines, job_hosts

NAME = "cf-selfboot"
BURST = ROOT / "clusterforge/lab/data/burst.yaml"


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    yield from bring_up(NAME, "--boot", "self", "--blueprint", str(BURST))


def paths():  # type: ignore[no-untyped-def]
    from clusterforge.lab.paths import LabPaths

    return LabPaths.of(NAME)


def test_every_node_configured_itself_and_the_job_ran_on_every_compute_node(lab: Lab) -> None:
    out = lab.up_output
    for node in ("ctl-0001", "node-0001", "node-0002"):
        assert f"{node}: configured itself in" in out, out
    # all at once, as a powered-on cluster: no node waits for the controller's whole boot phase
    assert "starting 3 node(s) that configure themselves: ctl-0001, node-0001, node-0002" in out
    assert sorted(job_hosts(out)) == ["node-0001", "node-0002"]
    # nothing was pushed: the control host's ansible-runner folder holds no run but the bake's (`--tags install` on
    # the bake node, when this lab was the first to need the baked image)
    runs = [json.loads(p.read_text())["command"] for p in (paths().runner_dir / "artifacts").glob("*/command")]
    assert all("install" in " ".join(command) and "bake" in " ".join(command) for command in runs), runs
    assert lab.sh("node-0001", "cat /var/lib/clusterforge/boot.status").startswith("ok ")


def test_slurmctld_with_power_saving_logs_no_error_after_up(lab: Lab) -> None:
    """The power-saving slurm.conf (CLOUD nodes, the programs, SuspendExc*) loads into slurmctld 24.11 without an
    error line: no option it no longer knows (NoAddrCache, defunct since 23.11), beyond the first-start notices;
    nor does slurmdbd beside it, started once and not again under the controller's feet."""
    for log in ("slurmctld.log", "slurmdbd.log"):
        found = [line for line in error_lines(lab, "ctl-0001", log) if not FIRST_START.search(line)]
        assert not found, (log, found)


def test_provision_after_up_changes_nothing(lab: Lab) -> None:
    """site.yml pushed over SSH to nodes that configured themselves: they are already as it would make them, and
    so is the control host's side (the lab's folder that holds the munge key is as private as the munge role
    keeps it)."""
    out = lab.cli("provision").stdout
    recap = {m[1]: int(m[2]) for m in re.finditer(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", out, re.M)}
    assert recap == dict.fromkeys(["ctl-0001", "node-0001", "node-0002"], 0), out
    assert "changed=0 in" in out


def test_secrets_reach_the_node_but_not_the_image_or_its_users(lab: Lab) -> None:
    assert lab.sh("node-0001", "stat -c '%a %U' /etc/munge/munge.key") == "400 munge"
    denied = lab.run("node-0001", "setpriv --reuid=nobody --regid=nogroup --clear-groups "
                                  "cat /etc/clusterforge/secrets/munge.key /etc/munge/munge.key")
    assert denied.returncode != 0 and "Permission denied" in denied.stderr
    image = lab.status()["image"]
    baked = subprocess.run(["podman", "run", "--rm", "--entrypoint", "/bin/sh", image, "-c",
                            "ls /etc/munge/munge.key /etc/clusterforge/secrets 2>&1; command -v ansible-playbook"],
                           capture_output=True, text=True, check=False, timeout=120)
    assert "No such file" in baked.stdout and baked.stdout.count("No such file") == 2, baked.stdout
    assert baked.stdout.rstrip().endswith("/usr/bin/ansible-playbook")


def _set_host_var(node: str, values: dict[str, object] | None) -> None:
    nodes_file = paths().root / "boot" / "nodes.yml"
    inventory = yaml.safe_load(nodes_file.read_text())
    host = inventory["all"]["hosts"][node]
    host.pop("common_shared_mount", None)
    host |= values or {}
    nodes_file.write_text(yaml.safe_dump(inventory))


def _node_line(lab: Lab, node: str) -> str:
    return lab.sh("ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T|%E'")


def test_a_node_whose_boot_phase_fails_is_drained_with_the_reason_until_it_boots_well(lab: Lab) -> None:
    # this node is told its shared file system is at a mount point nothing mounts: the health check at the end of
    # its boot phase finds it missing (a host var in what the node is given; the lab's extra vars win over
    # inventory vars, so the override is one they do not set)
    _set_host_var("node-0002", {"common_shared_mount": "/shared-missing"})
    try:
        subprocess.run(["podman", "restart", "--time", "5", paths().container("node-0002")], check=True,
                       capture_output=True, timeout=120)
        lab.wait("node-0002 drained by its failed boot",
                 lambda: "boot phase failed" in _node_line(lab, "node-0002"), timeout=300)
        state, reason = _node_line(lab, "node-0002").split("|", 1)
        assert state.startswith("drain"), state
        assert "health" in reason, reason
        assert lab.sh("node-0002", "cat /var/lib/clusterforge/boot.status").startswith("failed ")
    finally:
        _set_host_var("node-0002", None)
    subprocess.run(["podman", "restart", "--time", "5", paths().container("node-0002")], check=True,
                   capture_output=True, timeout=120)
    lab.wait("node-0002 back in service after a good boot",
             lambda: _node_line(lab, "node-0002").split("|")[0] == "idle", timeout=300)
    assert lab.sh("ctl-0001", "srun -N2 --time=1 hostname | sort") == "node-0001\nnode-0002"



def _burst(lab: Lab) -> dict[str, str]:
    """Each burst node's state as sinfo shows it (`idle~` powered down, `mix#`/`alloc#` powering up)."""
    out = lab.sh("ctl-0001", "sinfo --noheader --Node --partition burst --format '%N %T'")
    return dict(line.split() for line in out.splitlines())


def _containers() -> set[str]:
    out = subprocess.run(["podman", "ps", "--filter", f"label=io.clusterforge.lab={NAME}", "--format",
                          "{{.Names}}"], capture_output=True, text=True, check=True, timeout=60).stdout
    return {name.removeprefix(f"{NAME}-") for name in out.split() if "burst" in name}


@functools.cache
def _controller_ip(name: str) -> str:
    """ctl-0001's address, read once: `lab status` fails while a burst container is being removed."""
    return str(next(n["ip"] for n in Lab(name, "").status()["nodes"] if n["name"] == "ctl-0001"))


def _prometheus(lab: Lab, path: str) -> Any:
    """An answer of Prometheus's API on ctl-0001 (the lab's monitoring host), as data."""
    with urllib.request.urlopen(f"http://{_controller_ip(lab.name)}:9090/api/v1/{path}", timeout=10) as answer:
        return json.load(answer)["data"]


def _burst_targets(lab: Lab) -> dict[str, str]:
    """The burst nodes Prometheus scrapes with the node exporter job, and each one's health (up, down, unknown)."""
    active = _prometheus(lab, "targets?state=active")["activeTargets"]
    return {t["labels"]["instance"]: t["health"] for t in active
            if t["labels"]["job"] == "node" and t["labels"]["instance"].startswith("burst-")}


def _node_down(lab: Lab) -> dict[str, str]:
    """NodeDown alerts by node: pending or firing."""
    return {a["labels"]["node"]: a["state"] for a in _prometheus(lab, "alerts")["alerts"]
            if a["labels"]["alertname"] == "NodeDown"}


def _after(lab: Lab, what: str, predicate: Callable[[], bool], timeout: float) -> float:
    """Seconds until `predicate` holds, polled every second (Lab.wait polls every 2 s)."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(1)
    return time.monotonic() - started


def test_slurm_powers_burst_nodes_up_for_a_job_replaces_a_killed_one_and_powers_them_down(lab: Lab) -> None:
    # the always-on node of the pool: the reconcile timer powers it up, as it would an instance
    lab.wait("burst-0001 up", lambda: _burst(lab).get("burst-0001") == "idle", timeout=420)
    assert _burst(lab)["burst-0002"] == "idle~" and _containers() == {"burst-0001"}
    # a powered-down node is no node down: the pool is no static target (NodeDown would page for an idle one) ...
    scraped = lab.sh("ctl-0001", "cat /etc/prometheus/prometheus.yml")
    assert "node-0001:9100" in scraped and "burst-" not in scraped
    # ... Prometheus learns the powered-up ones from the power-save programs' file, written from SLURM's view
    took = _after(lab, "burst-0001 an up target", lambda: _burst_targets(lab) == {"burst-0001": "up"}, 150)
    print(f"burst-0001 idle -> an up target in {took:.0f} s")
    # the first run cannot end by itself: only the kill below ends it, once slurmctld finds the node dead
    # (SlurmdTimeout 30 s), however long the steps before it take (its time limit bounds it); the rerun ends
    job = lab.sh("ctl-0001", "sbatch --parsable -p burst -N3 --time=10 --wrap 'run=${SLURM_RESTART_COUNT:-0}; "
                             "srun hostname | sort > /shared/burst.$run; if [ $run = 0 ]; then sleep infinity; fi'")
    lab.wait("the job running on three burst nodes", lambda: lab.job(job).get("JobState") == "RUNNING", timeout=420)
    assert _containers() == {"burst-0001", "burst-0002", "burst-0003"}  # two containers started for it
    # ... by their BMCs: the programs asked the emulator, its notifications started them, and nothing else could
    agent_log = (paths().root / "power" / "agent.log").read_text()
    for node in ("burst-0002", "burst-0003"):
        assert f"{node} powered on: container started" in agent_log, agent_log
    assert not (paths().root / "power" / "agent.sock").exists()  # no socket: no other way to start a node
    assert '"provider": "onprem"' in lab.sh("ctl-0001", "cat /etc/slurm/clusterforge-powersave.json")
    # while the job runs, each of its nodes is an up target (a node joins once SLURM has it up: the next program
    # call or reconcile pass, within a minute)
    everyone = {"burst-0001": "up", "burst-0002": "up", "burst-0003": "up"}
    took = _after(lab, "the job's three nodes up targets", lambda: _burst_targets(lab) == everyone, 150)
    print(f"job RUNNING -> its three nodes up targets in {took:.0f} s")
    assert lab.job(job).get("JobState") == "RUNNING"
    lab.wait("its first run's output", lambda: lab.run("ctl-0001", "test -s /shared/burst.0").returncode == 0, 60)
    assert lab.sh("ctl-0001", "cat /shared/burst.0").split() == ["burst-0001", "burst-0002", "burst-0003"]
    # a powered-up server hangs with the job on it (its BMC still says On): SLURM still believes it up, so NodeDown
    # fires; slurmctld marks it DOWN, not responding, and reconcile powers it off and on again through its BMC
    # (the new container is the server's next boot), and the job runs again.
    subprocess.run(["podman", "kill", f"{NAME}-burst-0003"], check=True, capture_output=True, timeout=60)
    took = _after(lab, "NodeDown firing for the killed burst-0003",
                  lambda: _node_down(lab).get("burst-0003") == "firing", 50)
    print(f"burst-0003 killed -> NodeDown firing in {took:.0f} s")
    assert not _node_down(lab).keys() & {"burst-0001", "burst-0002"}
    lab.wait("the requeued job done", lambda: lab.job(job).get("JobState") == "COMPLETED", timeout=600)
    assert int(lab.job(job)["Restarts"]) >= 1
    assert lab.sh("ctl-0001", "cat /shared/burst.1").split() == ["burst-0001", "burst-0002", "burst-0003"]
    log = lab.sh("ctl-0001", "journalctl -u clusterforge-reconcile --no-pager -o cat")
    assert "replacing 1 (not responding): burst-0003" in log, log
    # idle for SuspendTime (60 s): slurmctld powers the two down and suspend removes their containers, taking
    # them out of Prometheus's targets first
    done = time.monotonic()
    gone = _after(lab, "burst-0002 and burst-0003 no targets",
                  lambda: _burst_targets(lab) == {"burst-0001": "up"}, 300)
    lab.wait("burst-0002 and burst-0003 powered down", lambda: _burst(lab) == {
        "burst-0001": "idle", "burst-0002": "idle~", "burst-0003": "idle~"}, timeout=300)
    print(f"job COMPLETED -> burst-0002/0003 no targets in {gone:.0f} s, powered down (idle~) in "
          f"{time.monotonic() - done:.0f} s")
    # a server is off when its BMC says so: the emulator applies a change 1-11 s after it is asked, and the
    # container goes with that notification, which may come after slurmctld's SuspendTimeout (10 s)
    lab.wait("burst-0002 and burst-0003 containers gone", lambda: _containers() == {"burst-0001"}, timeout=60)
    # powered down, they never page: no NodeDown fires for them over its for: (15 s) and two scrapes after (suspend
    # waits for Prometheus to stop their targets before it removes the containers: not even pending)
    seen: set[tuple[str, str]] = set()
    until = time.monotonic() + 30
    while time.monotonic() < until:
        seen |= {(node, state) for node, state in _node_down(lab).items() if node in ("burst-0002", "burst-0003")}
        time.sleep(1)
    print(f"NodeDown for the powered-down burst nodes over 30 s: {sorted(seen) or 'none'}")
    assert not [state for _, state in seen if state == "firing"], seen
    assert _burst_targets(lab) == {"burst-0001": "up"}
