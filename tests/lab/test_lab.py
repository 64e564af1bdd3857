"""A 3-node lab from the baked image: a job across the compute nodes, observable state of every role, a second
run that changes nothing, check mode, health drain, no key material written anywhere, a restart that recovers,
and a teardown that leaves nothing behind. The fault drills are in test_fault_drills.py.

The lab's blueprint carries Ansible template syntax in its free text (`description`) for every run of this
module: the nodes must show it as text and nothing in it may run, on the control host or any node."""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from clusterforge.lab.repo import MOUNT
from clusterforge.target_kernel import blueprint_model
from tests.conftest import ROOT
from tests.lab.conftest import (
    FIRST_START,
    LABEL,
    Lab,
    bring_up,
    clusterforge,
    error_lines,
    job_hosts,
    leftovers,
    real_slurmctld,
)

pytestmark = pytest.mark.lab
NAME = f"cf-labtest-{os.getpid()}"
COMPUTE = ["node-0001", "node-0002"]
ALL = ["ctl-0001", *COMPUTE]


MARKER = Path(f"/tmp/cf-lab-evaluated-{os.getpid()}")
# every form of Jinja Ansible would evaluate: an expression, a statement, a lookup that reads a root-only file
DESCRIPTION = (f"{{{{ lookup('pipe', 'touch {MARKER}') }}}} {{% set x = lookup('pipe', 'touch {MARKER}') %}}"
               "{# c #} {{ lookup('file', '/etc/shadow') }}")


PINS = blueprint_model().model_fields["software"].default  # the lab's blueprint pins none: the defaults
BRANCH = PINS.nvidia_driver.split(".")[0]


def nccl_code(version: str) -> str:
    """NCCL's ncclGetVersion integer: major*10000 + minor*100 + patch (since 2.9)."""
    major, minor, patch = (int(part) for part in version.split("."))
    return str(major * 10000 + minor * 100 + patch)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, release: tuple[str, ...]) -> Iterator[Lab]:
    """The lab of this module, brought up and provisioned by the installed release (tests/test_release.py installs
    the same wheel): `lab up`, `lab provision` and the rest of this module run outside any checkout."""
    from clusterforge.lab.render import DEFAULT_BLUEPRINT, data_file

    blueprint = tmp_path_factory.mktemp("blueprint") / "lab.yaml"
    text = data_file(DEFAULT_BLUEPRINT).read_text()
    blueprint.write_text(text.replace("target: onprem", f"description: {json.dumps(DESCRIPTION)}\ntarget: onprem"))
    MARKER.unlink(missing_ok=True)
    try:
        yield from bring_up(NAME, "--boot", "push", "--blueprint", str(blueprint), program=release)
    finally:
        MARKER.unlink(missing_ok=True)


def nothing_evaluated(lab: Lab) -> None:
    """The marker the description's commands would make exists nowhere."""
    assert not MARKER.exists(), f"{MARKER} on the control host: a template from the blueprint ran"
    for node in ALL:
        assert lab.sh(node, f"test -e {MARKER} && echo present || echo absent") == "absent", node


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


def test_slurm_is_24_11(lab: Lab) -> None:
    for node in ALL:
        assert re.fullmatch(r"slurm(-wlm)? 24\.11\.\d+", lab.sh(node, "sinfo --version")), node


def test_daemon_logs_are_clean_after_up(lab: Lab) -> None:
    """After `lab up` (a first start, the smoke job and the MPI check): no error line from slurmctld, slurmdbd
    or any slurmd except the first-start notices."""
    logs = [("ctl-0001", "slurmctld.log"), ("ctl-0001", "slurmdbd.log"), *((n, "slurmd.log") for n in COMPUTE)]
    found = {f"{node}:{log}": [line for line in error_lines(lab, node, log) if not FIRST_START.search(line)]
             for node, log in logs}
    assert all(not lines for lines in found.values()), found


def test_compute_nodes_are_configless(lab: Lab) -> None:
    """Compute nodes hold the munge key and no SLURM file: slurmd fetched them from slurmctld."""
    for node in COMPUTE:
        assert lab.run(node, "test -e /etc/slurm/slurm.conf").returncode == 1, node
        cached = lab.sh(node, "cat /run/slurm/conf/slurm.conf")
        assert "SlurmctldParameters=enable_configless" in cached, node
    assert "--conf-server ctl-0001" in lab.sh(COMPUTE[0], "cat /etc/default/slurmd")


def test_accounting_records_a_finished_job(lab: Lab) -> None:
    job_id = lab.sh("ctl-0001", "sbatch --parsable --wait -N2 --time=1 --wrap 'srun hostname'")
    lab.wait("the job in accounting", lambda: "COMPLETED" in lab.sh(
        "ctl-0001", f"sacct -n -X -P -j {job_id} -o state"), timeout=30)
    assert lab.sh("ctl-0001", f"sacct -n -X -P -j {job_id} -o nodelist") == "node-[0001-0002]"


def test_qos_and_preemption_are_in_the_database(lab: Lab) -> None:
    qos = dict(line.split("|", 1) for line in lab.sh(
        "ctl-0001", "sacctmgr -n -P show qos format=name,preempt").splitlines())
    assert qos["high"] == "low" and qos["low"] == "", qos
    config = dict(re.findall(r"^(\w+)\s+= (.*)$", lab.sh("ctl-0001", "scontrol show config"), re.M))
    assert config["PreemptType"] == "preempt/qos" and config["PreemptMode"] == "REQUEUE", config
    assert config["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert config["MpiDefault"] == "pmix"


def test_a_high_job_requeues_a_low_one_that_then_runs_again(lab: Lab) -> None:
    low = lab.sh("ctl-0001", "sbatch --parsable --qos=low -N2 --exclusive --time=5 --wrap 'srun sleep 300'")
    lab.wait("the low job running", lambda: lab.job(low).get("JobState") == "RUNNING", timeout=60)
    high = lab.sh("ctl-0001", "sbatch --parsable --qos=high -N2 --exclusive --time=1 --wrap 'srun sleep 5'")
    try:
        lab.wait("the high job running", lambda: lab.job(high).get("JobState") in ("RUNNING", "COMPLETED"), timeout=60)
        assert lab.job(low).get("JobState") == "PENDING"
        assert "Restarts=1" in lab.sh("ctl-0001", f"scontrol show job {low}")
        # back after the high job and the requeue hold (AuthInfo=cred_expire=30 in the lab blueprint)
        lab.wait("the low job running again", lambda: lab.job(low).get("JobState") == "RUNNING", timeout=150)
        assert "PREEMPTED" in lab.sh("ctl-0001", f"sacct -n -X -P --duplicates -j {low} -o state")
    finally:
        lab.sh("ctl-0001", f"scancel {low} {high}", check=False)
    lab.wait("the nodes free", lambda: lab.sh("ctl-0001", "squeue -h | wc -l") == "0", timeout=60)


def test_mpi_allreduce_across_both_compute_nodes(lab: Lab) -> None:
    probe = ("from mpi4py import MPI; c = MPI.COMM_WORLD; s = c.allreduce(c.rank + 1); "
             "print(c.rank, c.size, MPI.Get_processor_name(), s)")
    out = lab.sh("ctl-0001", f"srun --mpi=pmix -N2 -n4 --time=1 python3 -c {shlex.quote(probe)}")
    ranks = sorted(tuple(line.split()) for line in out.splitlines())
    assert ranks == [("0", "4", "node-0001", "10"), ("1", "4", "node-0001", "10"),
                     ("2", "4", "node-0002", "10"), ("3", "4", "node-0002", "10")], out
    assert "An MPI allreduce across two compute nodes agrees through PMIx" in lab.up_output


def test_munge_key_is_one_key_0400_owned_by_munge(lab: Lab) -> None:
    sums = {node: lab.sh(node, "stat -c '%a %U' /etc/munge/munge.key && md5sum < /etc/munge/munge.key") for node in ALL}
    assert {s.splitlines()[0] for s in sums.values()} == {"400 munge"}
    assert len({s.splitlines()[1] for s in sums.values()}) == 1, sums


def test_slurm_files_and_settings_that_guard_users_from_each_other(lab: Lab) -> None:
    modes = lab.sh("ctl-0001", "stat -c '%a %U' /etc/slurm/slurm.conf /etc/slurm/cgroup.conf /var/spool/slurmctld")
    assert modes.splitlines() == ["644 root", "644 root", "700 slurm"]
    config = dict(re.findall(r"^(\w+)\s+= (.*)$", lab.sh("ctl-0001", "scontrol show config"), re.M))
    assert set(config["PrivateData"].split(",")) >= {"jobs", "usage", "users", "accounts"}, config["PrivateData"]
    assert config["ProctrackType"] == "proctrack/cgroup" and "task/cgroup" in config["TaskPlugin"]
    assert config["AuthType"] == "auth/munge"


def test_each_daemon_enabled_only_where_it_belongs(lab: Lab) -> None:
    state = "systemctl is-enabled {0} 2>/dev/null; systemctl is-active {0} 2>/dev/null; true"
    assert lab.sh("ctl-0001", state.format("slurmctld")).split() == ["enabled", "active"]
    assert lab.sh("ctl-0001", state.format("slurmd")).split() in (["disabled", "inactive"], ["inactive"])
    for node in COMPUTE:
        assert lab.sh(node, state.format("slurmd")).split() == ["enabled", "active"]
        assert lab.sh(node, state.format("slurmctld")).split() in (["disabled", "inactive"], ["inactive"])
    for node in ALL:
        assert lab.sh(node, "systemctl is-active munge") == "active"
        assert lab.sh(node, "systemctl is-active prometheus-node-exporter") == "active"
        monitoring = node == "ctl-0001"  # Prometheus and Alertmanager on the controller only
        for unit in ("prometheus", "prometheus-alertmanager"):
            assert lab.sh(node, state.format(unit)).split() in ((["enabled", "active"],) if monitoring else (
                ["disabled", "inactive"], ["inactive"])), (node, unit)
    assert lab.sh("ctl-0001", state.format("clusterforge-remediate.timer")).split() == ["enabled", "active"]


def test_slurm_sees_every_compute_node_idle(lab: Lab) -> None:
    assert lab.sh("ctl-0001", "sinfo --noheader --Node --format '%N %T'").splitlines() == [
        f"{node} idle" for node in COMPUTE]


def test_nccl_is_the_pinned_library(lab: Lab) -> None:
    probe = ("python3 -c 'import ctypes; l = ctypes.CDLL(\"libnccl.so.2\"); v = ctypes.c_int(); "
             "l.ncclGetVersion(ctypes.byref(v)); print(v.value)'")
    for node in COMPUTE:
        assert lab.sh(node, probe) == nccl_code(PINS.nccl)
        assert "NCCL_IB_DISABLE=0" in lab.sh(node, "cat /etc/nccl.conf")


def test_hardware_roles_configured_what_they_could(lab: Lab) -> None:
    node = COMPUTE[0]
    assert lab.sh(node, f"dpkg-query -W -f '${{Version}}' cuda-drivers-{BRANCH}") == f"{PINS.nvidia_driver}-1"
    assert "blacklist nouveau" in lab.sh(node, "cat /etc/modprobe.d/blacklist-nouveau.conf")
    pin = lab.sh(node, "cat /etc/apt/preferences.d/clusterforge-nvidia-driver")
    assert f"Pin: version {PINS.nvidia_driver}-*" in pin
    assert 'options lnet networks="o2ib0(ib0)"' in lab.sh(node, "cat /etc/modprobe.d/lustre.conf")
    fstab = lab.sh(node, "cat /etc/fstab")
    assert "192.0.2.10@o2ib:/lab /lustre lustre defaults,_netdev,flock,nosuid,nodev 0 0" in fstab
    assert "ib_ipoib" in lab.sh(node, "cat /etc/modules-load.d/clusterforge-infiniband.conf")
    assert lab.sh("ctl-0001", "systemctl is-enabled opensm; true") == "disabled"  # no HCA to manage
    hosts = lab.sh(node, "cat /etc/hosts")
    assert all(re.search(rf"^\d+\.\d+\.\d+\.\d+ {n}$", hosts, re.M) for n in ALL), hosts
    # IMEX: the compute nodes stand in for the trays of one NVLink domain, each listing both addresses
    assert lab.sh(node, f"dpkg-query -W -f '${{Version}}' nvidia-imex-{BRANCH}") == f"{PINS.nvidia_driver}-1"
    ips = {n["name"]: n["ip"] for n in lab.status()["nodes"]}
    for each in COMPUTE:
        listed = [line for line in lab.sh(each, "cat /etc/nvidia-imex/nodes_config.cfg").splitlines()
                  if not line.startswith("#")]
        assert listed == [ips[n] for n in COMPUTE], listed
    assert "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg" in lab.sh(node, "cat /etc/nvidia-imex/config.cfg")
    assert lab.sh("ctl-0001", "test -e /etc/nvidia-imex || echo absent") == "absent"  # not a tray


def test_up_said_what_it_skipped_for_lack_of_hardware(lab: Lab) -> None:
    text = " ".join(lab.up_output.split())
    for expected in ("skipped loading nvidia/nvidia_uvm", "skipped modprobe ib_umad",
                     "skipped mounting 192.0.2.10@o2ib:/lab on /lustre: this host is a container",
                     "skipped chrony", "skipped applying sysctl", "skipped starting nvidia-imex"):
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
    assert failed.returncode == 1 and "FAIL gpu-driver (person): nvidia driver not loaded" in failed.stdout
    state = lab.sh("ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T|%E'")
    assert state.startswith("drain"), state
    assert "clusterforge-health: gpu-driver (person): nvidia driver not loaded" in state, state
    lab.sh(node, "clusterforge-health")
    # a resumed node counts as not responding until slurmctld's next ping
    lab.wait(f"{node} resumed", lambda: lab.sh(
        "ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T|%E'") == "idle|none", timeout=60)


def test_no_key_material_in_rendered_files_run_records_or_output(lab: Lab, tmp_path) -> None:
    """The munge key, from the control host's file or from a vault variable, and the caller's cloud credentials
    appear nowhere clusterforge or Ansible write: rendered files, ansible-runner's records, the output, even
    with --diff (which prints the content of every changed file whose task lacks no_log)."""
    from clusterforge.lab.paths import LabPaths

    root = LabPaths.of(lab.name).root
    key_file = root / "munge.key"
    file_key = key_file.read_bytes()
    assert lab.sh(COMPUTE[0], "base64 -w0 /etc/munge/munge.key") == base64.b64encode(file_key).decode()
    vault_key = "cf-vault-" + secrets.token_hex(24)
    token = "cf-token-" + secrets.token_hex(16)
    (tmp_path / "vault.yml").write_text(f"munge_key: {vault_key}\n")

    env = {**os.environ, "AWS_SECRET_ACCESS_KEY": token}
    runs = [subprocess.run([sys.executable, "-m", "clusterforge", "lab", "provision", "--name", lab.name, "--diff",
                            *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True)
            for extra in (["-e", f"@{tmp_path / 'vault.yml'}"], [])]
    assert recap_changed(runs[0].stdout)[COMPUTE[0]] >= 1 and recap_changed(runs[1].stdout)[COMPUTE[0]] >= 1
    assert lab.sh(COMPUTE[0], "base64 -w0 /etc/munge/munge.key") == base64.b64encode(file_key).decode()

    written = [f for f in root.rglob("*") if f.is_file() and f != key_file]
    assert any("artifacts" in f.parts for f in written)  # the scan covers the run records
    texts = {str(f): f.read_bytes() for f in written}
    texts.update({f"output of run {i}": (r.stdout + r.stderr).encode() for i, r in enumerate(runs)})
    needles = {"vault key": [vault_key.encode()], "token": [token.encode()], "key file": key_windows(file_key)}
    assert found_in(texts, needles) == []


def found_in(texts: dict[str, bytes], needles: dict[str, list[bytes]]) -> list[tuple[str, str]]:
    """(what, where) for each kind of needle found in each text: every text read once, by one Aho-Corasick
    automaton of all the needles (ahocorasick-rs). The lab's repository holds a 250-MB package, and one `in` per
    needle (3,000 of them: a key's every window) read it 3,000 times, 5 of this test's 8 minutes in CI; the
    automaton reads it once, in about 2 s."""
    import ahocorasick_rs

    kinds = [what for what, forms in needles.items() for _ in forms]
    automaton = ahocorasick_rs.BytesAhoCorasick([form for forms in needles.values() for form in forms])
    # overlapping: every needle that occurs is reported, not only the first of those that overlap
    return sorted({(kinds[index], name) for name, data in texts.items()
                   for index, _, _ in automaton.find_matches_as_indexes(data, overlapping=True)})


def key_windows(key: bytes, width: int = 12) -> list[bytes]:
    """Every run of `width` bytes of a binary key as raw bytes, hex and base64 (at each alignment): how a key
    would appear if a task printed or diffed it."""
    forms = [key[i:i + width] for i in range(len(key) - width + 1)]
    forms += [key[i:i + width].hex().encode() for i in range(len(key) - width + 1)]
    for shift in range(3):
        encoded = base64.b64encode(key[shift:])
        forms += [encoded[i:i + 16] for i in range(0, len(encoded) - 16 + 1, 4)]
    return forms


def test_container_restart_brings_the_node_back(lab: Lab) -> None:
    node = COMPUTE[0]
    subprocess.run(["podman", "restart", "--time", "5", f"{lab.name}-{node}"], check=True, capture_output=True)
    # slurmd reports the restart as a reboot ("Node unexpectedly rebooted", DOWN); the health check returns it
    lab.wait(f"{node} idle again", lambda: lab.sh(
        "ctl-0001", f"sinfo --noheader --Node --nodes {node} --format '%T'", check=False) == "idle", timeout=120)
    # the first step right after the return can be refused ("Invalid job credential") while slurmd settles
    lab.wait("a job on both nodes", lambda: sorted(lab.run("ctl-0001", "srun -N2 --time=1 hostname").stdout.split())
             == COMPUTE, timeout=60)


def test_blueprint_text_reaches_every_node_as_text(lab: Lab) -> None:
    """After up and every provision of this module (second run, check mode, --diff, vault key): the login banner
    holds the description character for character, and no template in it ran."""
    for node in ALL:
        motd = lab.sh(node, "cat /etc/motd")
        assert motd == f"clusterforge cluster lab\n{DESCRIPTION}", (node, motd)
        assert "root:" not in motd
    nothing_evaluated(lab)


PRODUCTION = """
apiVersion: clusterforge/v1
kind: Cluster
name: prod
target: onprem
pools:
  - {name: pctl, hardware: lab-node, count: 2, role: controller}
  - {name: gpu, hardware: lab-node, count: 4, role: compute, partition: batch}
storage:
  shared: {mount: /shared, source: "nfs-01:/export/shared"}
slurm:
  state_save_location: /shared/slurm/state
  partitions: [{name: batch, pools: [gpu], default: true, max_time: "2-00:00:00"}]
  qos:
    - {name: low, priority: 0, max_wall: "1-00:00:00"}
    - {name: high, priority: 1000, preempt: [low], grp_tres: "cpu=64", max_jobs_per_user: 8}
  accounts:
    - {name: physics, fairshare: 60, qos: [normal, low, high], default_qos: normal, users: [alice]}
    - {name: chemistry, fairshare: 40, qos: [normal, low], users: [bob]}
  settings: {SchedulerParameters: "bf_continue,bf_window=4320", SlurmctldTimeout: 60, MessageTimeout: 30}
  cgroup_settings: {AllowedRAMSpace: 98}
  prolog_epilog: true
  pam_slurm_adopt: true
  job_container_tmpfs: {base_path: /local/slurm-tmp}
"""


def test_a_real_slurmctld_accepts_a_rendered_production_config(lab: Lab, tmp_path: Path) -> None:
    """A blueprint with QOS, accounts, two controllers, pass-through settings, prolog/epilog, pam_slurm_adopt and
    job_container/tmpfs, rendered, then loaded by a real slurmctld 24.11 (a throwaway container of the lab's
    image named as the rendered primary, its nodes resolving to loopback, accounting through the lab's
    slurmdbd) until it runs as the primary controller."""
    from clusterforge.lab.render import data_file

    (tmp_path / "prod.yaml").write_text(PRODUCTION)
    out = tmp_path / "out"
    from tests.lab.conftest import clusterforge

    clusterforge("render", str(tmp_path / "prod.yaml"), "--catalog", str(data_file("catalog.yaml")), "-o", str(out))
    conf = (out / "slurm/slurm.conf").read_text()
    assert "SlurmctldHost=pctl-0001" in conf and "SlurmctldHost=pctl-0002" in conf
    assert "SchedulerParameters=nohold_on_prolog_fail,sched_interval=10,bf_continue,bf_window=4320" in conf
    assert "JobContainerType=job_container/tmpfs" in conf and "RebootProgram=" in conf and "AuthInfo=" in conf
    dbd_ip = next(n["ip"] for n in lab.status()["nodes"] if n["name"] == "ctl-0001")
    hosts = f"{dbd_ip} pctl-0001\n127.0.0.2 pctl-0002\n" + "".join(
        f"127.0.1.{i} gpu-{i:04d}\n" for i in range(1, 5))
    log, _ = real_slurmctld(lab, out / "slurm", "pctl-0001", hosts)
    assert "Running as primary controller" in log, log[-3000:]
    assert "fatal" not in log, log[-3000:]
    assert not re.search(r"error: .*(Parse|Parsing|unrecognized|Unknown|invalid)", log, re.I), log[-3000:]


def test_nvl72_blocks_load_in_a_real_slurmctld(lab: Lab, tmp_path: Path) -> None:
    """`new gb200-nvl72-row` (4 racks): 72 tray nodes with Gres=gpu:gb200:4, gres.conf per tray and
    topology/block with one block per rack; a real slurmctld 24.11 loads it and `scontrol show topology` lists
    the four blocks of 18 trays and the BlockSizes."""
    from tests.lab.conftest import clusterforge

    blueprint, out = tmp_path / "nvl.yaml", tmp_path / "out"
    clusterforge("new", "gb200-nvl72-row", "-o", str(blueprint))
    clusterforge("render", str(blueprint), "-o", str(out))
    conf = (out / "slurm/slurm.conf").read_text()
    assert "TopologyPlugin=topology/block" in conf
    assert "NodeName=gb200-[0001-0072] Sockets=2 CoresPerSocket=72 ThreadsPerCore=1" in conf
    assert " Gres=gpu:gb200:4 " in conf
    gres = (out / "slurm/gres.conf").read_text()
    assert "NodeName=gb200-[0001-0072] Name=gpu Type=gb200 File=/dev/nvidia[0-3]" in gres
    # the controller is the first tray, and slurmdbd would be on it too: none here (scontrol must reach this
    # container's slurmctld, not the lab's), so accounting is off and every tray resolves to loopback
    (out / "slurm/slurm.conf").write_text(re.sub(r"(?m)^AccountingStorageHost=.*\n", "", conf.replace(
        "AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageType=accounting_storage/none")))
    hosts = "".join(f"127.1.0.{i} gb200-{i:04d}\n" for i in range(1, 73))
    log, topology = real_slurmctld(lab, out / "slurm", "gb200-0001", hosts, "scontrol show topology")
    assert "Running as primary controller" in log, log[-3000:]
    assert "fatal" not in log and not re.search(r"error: .*(topolog|block)", log, re.I), log[-3000:]
    blocks = re.findall(r"BlockName=(\S+) BlockIndex=\d+ Nodes=(\S+) BlockSize=(\d+)", topology)
    assert [(name, nodes, int(size)) for name, nodes, size in blocks] == [
        (f"gb200-nvl{r:02d}", f"gb200-[{18 * r - 17:04d}-{18 * r:04d}]", 18) for r in range(1, 5)], topology
    aggregated = re.findall(r"AggregatedBlock=\S+ BlockIndex=\d+ Nodes=(\S+) BlockSize=(\d+)", topology)
    assert sorted(aggregated) == [("gb200-[0001-0036]", "36"), ("gb200-[0001-0072]", "72"),
                                  ("gb200-[0037-0072]", "36")], topology


def power_save_play(container: str, slurm_dir: str) -> subprocess.CompletedProcess[str]:
    """The slurm role's power-save tasks as a controller runs them on itself (`-c local`, as the baked image's boot
    phase does), from the checkout mounted read-only."""
    extra = {"slurm_config_dir": slurm_dir, "slurm_power_save_source": MOUNT,
             "slurm_power_save_apt": ["python3-pydantic"]}  # the EC2 provider's boto3 is not called here
    # the role names its collection's filters (clusterforge.cluster.*): the checkout is that collection
    collection = "/tmp/collections/ansible_collections/clusterforge"
    subprocess.run(["podman", "exec", container, "sh", "-c", f"mkdir -p {collection} && ln -sfn {MOUNT} "
                    f"{collection}/cluster"], check=True, capture_output=True)
    return subprocess.run(
        ["podman", "exec", "-w", MOUNT, "-e", f"ANSIBLE_CONFIG={MOUNT}/ansible.cfg", "-e",
         "ANSIBLE_COLLECTIONS_PATH=/tmp/collections:/usr/share/ansible/collections", container, "ansible-playbook",
         "-c", "local", "-i", "localhost,", "/tmp/power-save/play.yml", "-e", json.dumps(extra)],
        capture_output=True, text=True, check=False, timeout=300)


def test_the_controller_gets_the_power_save_programs_and_loses_them_with_the_file(lab: Lab, tmp_path: Path) -> None:
    """An AWS render's power-save file on a controller from the lab's image: the programs run as SlurmUser with
    the baked pydantic, the file is where they read it, the reconcile timer runs, a second run changes nothing;
    without the file all of it goes."""
    out = tmp_path / "aws"
    clusterforge("render", str(ROOT / "examples" / "aws-p5.yaml"), "-o", str(out))
    (out / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n"
                                  "    - ansible.builtin.include_role: {name: slurm, tasks_from: power_save.yml}\n")
    container = f"{lab.name}-powersave"
    subprocess.run(["podman", "rm", "-f", container], capture_output=True, check=False)
    subprocess.run(["podman", "run", "-d", "--name", container, "--hostname", "controller-0001", "--network",
                    f"{lab.name}-net", "--systemd=always", "--label", f"{LABEL}={lab.name}",
                    "--volume", f"{ROOT}:{MOUNT}:ro", lab.status()["image"]], check=True, capture_output=True)
    try:
        def run(*argv: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["podman", "exec", container, *argv], capture_output=True, text=True, check=False,
                                  timeout=60)

        lab.wait("the container booted", lambda: run("systemctl", "is-system-running").stdout.strip() in (
            "running", "degraded"), timeout=60)
        subprocess.run(["podman", "cp", str(out), f"{container}:/tmp/power-save"], check=True)
        first = power_save_play(container, "/tmp/power-save/slurm")
        assert first.returncode == 0, first.stdout[-3000:]
        helped = run("runuser", "-u", "slurm", "--", "/usr/local/sbin/clusterforge-resume", "--help")
        assert helped.returncode == 0 and "slurmctld's ResumeProgram" in helped.stdout, helped.stderr
        bad = run("runuser", "-u", "slurm", "--", "/usr/local/sbin/clusterforge-suspend", "gpu-[0001")
        assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr  # read the file, refused the list
        assert json.loads(run("cat", "/etc/slurm/clusterforge-powersave.json").stdout)["cluster"] == "nlp-p5"
        assert run("systemctl", "is-active", "clusterforge-reconcile.timer").stdout.strip() == "active"
        again = power_save_play(container, "/tmp/power-save/slurm")
        assert re.search(r"changed=0\b", again.stdout), again.stdout[-3000:]
        run("rm", "/tmp/power-save/slurm/clusterforge-powersave.json")
        gone = power_save_play(container, "/tmp/power-save/slurm")
        assert gone.returncode == 0, gone.stdout[-3000:]
        assert run("systemctl", "is-active", "clusterforge-reconcile.timer").stdout.strip() != "active"
        left = run("sh", "-c", "ls /usr/local/sbin/clusterforge-resume /etc/slurm/clusterforge-powersave.json "
                               "/opt/clusterforge/powersave /etc/systemd/system/clusterforge-reconcile.timer")
        assert left.stdout == "" and left.returncode != 0, left.stdout
    finally:
        subprocess.run(["podman", "rm", "-f", container], capture_output=True, check=False)


def test_up_and_provision_ran_from_the_installed_release(lab: Lab) -> None:
    assert lab.program != (sys.executable, "-m", "clusterforge") and not lab.program[0].startswith(str(ROOT))
    version = subprocess.run([*lab.program, "--version"], capture_output=True, text=True, check=True).stdout
    from clusterforge.core.version import __version__

    assert version.strip().endswith(__version__)


def test_a_teams_playbook_with_the_installed_collection_brings_slurmd_back(lab: Lab, tmp_path: Path) -> None:
    """A team's own playbook, outside the checkout, names the roles by their full names from the collection
    installed from its tarball; run against the lab's inventory with slurmd stopped and disabled on both compute
    nodes, it brings them back into SLURM and a job runs on both."""
    from clusterforge.lab.paths import LabPaths

    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "ansible-galaxy"), "collection", "build", str(ROOT), "--output-path", str(tmp_path)],
                   check=True, capture_output=True, text=True)
    (tarball,) = tmp_path.glob("clusterforge-cluster-*.tar.gz")
    collections = tmp_path / "collections"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")},
           "ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_HOME": str(tmp_path / "home"),
           "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_PIPELINING": "True", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORKS": "8"}
    subprocess.run([str(bin_dir / "ansible-galaxy"), "collection", "install", str(tarball), "-p", str(collections)],
                   check=True, capture_output=True, text=True, env=env)
    team = tmp_path / "team"
    team.mkdir()
    play = yaml.safe_load((ROOT / "site.yml").read_text())  # the team's copy, its roles named in full
    play[0]["roles"] = [f"clusterforge.cluster.{role}" for role in play[0]["roles"]]
    (team / "cluster.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    for node in COMPUTE:
        lab.sh(node, "systemctl disable --now slurmd")
    paths = LabPaths.of(lab.name)
    done = subprocess.run([str(bin_dir / "ansible-playbook"), "-i", str(paths.render / "inventory" / "hosts.yml"),
                           "-e", f"@{paths.extra_vars}", "cluster.yml"], cwd=team, env=env, capture_output=True,
                          text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    changed = recap_changed(done.stdout)
    assert all(changed[node] > 0 for node in COMPUTE), changed  # slurmd started and enabled again
    for node in COMPUTE:
        assert lab.sh(node, "systemctl is-enabled slurmd; systemctl is-active slurmd") == "enabled\nactive"
    lab.wait("both compute nodes idle", lambda: lab.sh("ctl-0001", "sinfo -h -N -o '%N %T' | sort").split()
             == ["node-0001", "idle", "node-0002", "idle"], 120)
    assert lab.sh("ctl-0001", "srun -N2 hostname | sort") == "node-0001\nnode-0002"


def test_down_leaves_nothing_behind(lab: Lab) -> None:
    out = lab.cli("down").stdout
    assert f"removed container {lab.name}-ctl-0001" in out and f"removed network {lab.name}-net" in out
    assert leftovers(lab.name) == {}
    mux = subprocess.run(["pgrep", "-f", f"instances/{lab.name}/cp-"], capture_output=True, text=True, check=False)
    assert mux.stdout == "", "ssh master connections left running"
