"""A 3-node lab from the baked image: a job across the compute nodes, observable state of every role, a second
run that changes nothing, check mode, health drain, a killed slurmd marked down, a restart that recovers, and
a teardown that leaves nothing behind."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator

import pytest

from tests.lab.conftest import Lab, bring_up, job_hosts, leftovers

pytestmark = pytest.mark.lab
NAME = f"cf-labtest-{os.getpid()}"
COMPUTE = ["node-0001", "node-0002"]
ALL = ["ctl-0001", *COMPUTE]


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    yield from bring_up(NAME)


def recap_changed(output: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", output, re.M)}


def test_up_runs_a_job_on_two_different_compute_nodes(lab: Lab) -> None:
    hosts = job_hosts(lab.up_output)
    assert sorted(hosts) == COMPUTE, lab.up_output


def test_status_names_the_controller_and_nodes(lab: Lab) -> None:
    status = lab.status()
    assert status["controller"] == "ctl-0001"
    assert [n["name"] for n in status["nodes"]] == ALL
    assert all(n["running"] and n["ip"] for n in status["nodes"])


def test_munge_key_is_one_key_0400_owned_by_munge(lab: Lab) -> None:
    sums = {node: lab.sh(node, "stat -c '%a %U' /etc/munge/munge.key && md5sum < /etc/munge/munge.key") for node in ALL}
    assert {s.splitlines()[0] for s in sums.values()} == {"400 munge"}
    assert len({s.splitlines()[1] for s in sums.values()}) == 1, sums


def test_each_daemon_enabled_only_where_it_belongs(lab: Lab) -> None:
    state = "systemctl is-enabled {0} 2>/dev/null; systemctl is-active {0} 2>/dev/null; true"
    assert lab.sh("ctl-0001", state.format("slurmctld")).split() == ["enabled", "active"]
    assert lab.sh("ctl-0001", state.format("slurmd")).split() in (["disabled", "inactive"], ["inactive"])
    for node in COMPUTE:
        assert lab.sh(node, state.format("slurmd")).split() == ["enabled", "active"]
        assert lab.sh(node, state.format("slurmctld")).split() in (["disabled", "inactive"], ["inactive"])
    for node in ALL:
        assert lab.sh(node, "systemctl is-active munge") == "active"


def test_slurm_sees_every_compute_node_idle(lab: Lab) -> None:
    assert lab.sh("ctl-0001", "sinfo --noheader --Node --format '%N %T'").splitlines() == [
        f"{node} idle" for node in COMPUTE]


def test_nccl_is_the_pinned_library(lab: Lab) -> None:
    probe = ("python3 -c 'import ctypes; l = ctypes.CDLL(\"libnccl.so.2\"); v = ctypes.c_int(); "
             "l.ncclGetVersion(ctypes.byref(v)); print(v.value)'")
    for node in COMPUTE:
        assert lab.sh(node, probe) == "22602"
        assert "NCCL_IB_DISABLE=0" in lab.sh(node, "cat /etc/nccl.conf")


def test_hardware_roles_configured_what_they_could(lab: Lab) -> None:
    node = COMPUTE[0]
    assert lab.sh(node, "dpkg-query -W -f '${Version}' cuda-drivers-570") == "570.133.20-1"
    assert "blacklist nouveau" in lab.sh(node, "cat /etc/modprobe.d/blacklist-nouveau.conf")
    assert "Pin: version 570.133.20-*" in lab.sh(node, "cat /etc/apt/preferences.d/clusterforge-nvidia-driver")
    assert 'options lnet networks="o2ib0(ib0)"' in lab.sh(node, "cat /etc/modprobe.d/lustre.conf")
    assert "192.0.2.10@o2ib:/lab /lustre lustre defaults,_netdev,flock 0 0" in lab.sh(node, "cat /etc/fstab")
    assert "ib_ipoib" in lab.sh(node, "cat /etc/modules-load.d/clusterforge-infiniband.conf")
    assert lab.sh("ctl-0001", "systemctl is-enabled opensm; true") == "disabled"  # no HCA to manage
    hosts = lab.sh(node, "cat /etc/hosts")
    assert all(re.search(rf"^\d+\.\d+\.\d+\.\d+ {n}$", hosts, re.M) for n in ALL), hosts


def test_up_said_what_it_skipped_for_lack_of_hardware(lab: Lab) -> None:
    text = " ".join(lab.up_output.split())
    for expected in ("skipped loading nvidia/nvidia_uvm", "skipped modprobe ib_umad",
                     "skipped mounting 192.0.2.10@o2ib:/lab on /lustre: this host is a container",
                     "skipped chrony", "skipped applying sysctl"):
        assert expected in text, expected


def test_second_provision_changes_nothing(lab: Lab) -> None:
    out = lab.cli("provision").stdout
    assert recap_changed(out) == dict.fromkeys(ALL, 0), out
    assert "changed=0 in" in out


def test_check_mode_on_the_provisioned_lab_is_clean(lab: Lab) -> None:
    out = lab.cli("provision", "--check").stdout
    assert recap_changed(out) == dict.fromkeys(ALL, 0), out


def test_plain_ansible_strategy_agrees(lab: Lab) -> None:
    out = lab.cli("provision", "--linear", "--tags", "verify").stdout
    assert recap_changed(out) == dict.fromkeys(ALL, 0), out


def test_health_check_drains_a_failing_node_and_resumes_it(lab: Lab) -> None:
    node = COMPUTE[1]
    lab.sh(node, "sed 's/^CHECK_GPUS=0/CHECK_GPUS=1/; s/^GPU_COUNT=0/GPU_COUNT=8/' /etc/clusterforge/health.conf"
                 " > /tmp/broken.conf")
    failed = lab.run(node, "clusterforge-health --conf /tmp/broken.conf")
    assert failed.returncode == 1 and "FAIL nvidia driver not loaded" in failed.stdout
    state = lab.sh("ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T|%E'")
    assert state.startswith("drain") and "clusterforge-health: nvidia driver not loaded" in state, state
    lab.sh(node, "clusterforge-health")
    # a resumed node counts as not responding until slurmctld's next ping
    lab.wait(f"{node} resumed", lambda: lab.sh(
        "ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T|%E'") == "idle|none", timeout=60)


def test_killed_slurmd_is_marked_down(lab: Lab) -> None:
    node = COMPUTE[0]
    lab.sh(node, "systemctl kill --signal=KILL slurmd")
    waited = lab.wait(f"{node} marked down", lambda: lab.sh(
        "ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T'").startswith("down"), timeout=150)
    print(f"{node} was marked down {waited:.0f} s after slurmd was killed")


def test_container_restart_brings_the_node_back(lab: Lab) -> None:
    node = COMPUTE[0]
    subprocess.run(["podman", "restart", "--time", "5", f"{lab.name}-{node}"], check=True, capture_output=True)
    lab.wait(f"{node} idle again", lambda: lab.sh(
        "ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T'", check=False) == "idle", timeout=120)
    assert sorted(lab.sh("ctl-0001", "srun -N2 hostname").split()) == COMPUTE


def test_down_leaves_nothing_behind(lab: Lab) -> None:
    out = lab.cli("down").stdout
    assert f"removed container {lab.name}-ctl-0001" in out and f"removed network {lab.name}-net" in out
    assert leftovers(lab.name) == {}
    mux = subprocess.run(["pgrep", "-f", f"instances/{lab.name}/cp-"], capture_output=True, text=True, check=False)
    assert mux.stdout == "", "ssh master connections left running"
