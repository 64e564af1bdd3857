"""Real-container lab tests. They need rootful podman (scripts/lab-host-setup). Elsewhere they are skipped with
the reason, unless CLUSTERFORGE_REQUIRE_LAB=1 (set by .ci/run), where a host that cannot run them fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

LABEL = "io.clusterforge.lab"

# The metal lab (test_lab_metal.py) boots two servers under QEMU's software emulation where KVM is not usable: one
# metal lab serves the module's tests, on one worker beside the container labs' modules. A machine without
# libvirt and QEMU (scripts/metal-host-setup) skips it with the reason, or fails where CLUSTERFORGE_REQUIRE_LAB=1
# (CI); CLUSTERFORGE_METAL_LAB=0 leaves it out (a quick run of the container labs alone).
METAL_LAB = os.environ.get("CLUSTERFORGE_METAL_LAB", "1") != "0"
collect_ignore = [] if METAL_LAB else ["test_lab_metal.py"]


def host_problems() -> list[str]:
    from clusterforge.lab import host, image, podman

    facts = host.gather()
    need = not (facts.tools.get("podman") and podman.exists("image", image.BASE_IMAGE))
    return [p.render() for p in host.problems(facts, need_mmdebstrap=need)]


# The modules, longest first (their time in a clean-clone CI run, benchmarks/README.md): CI runs two at a time, each
# module whole on one worker, in this order (scripts/test: `--dist loadfile --no-loadscope-reorder`), so that the
# longest start first and the short ones fill the end. Each lab serves its own repository (lab/repo.py), so day
# two's driver pin runs beside the others. A module not named here runs after these.
LONGEST_FIRST = ("test_lab_metal.py", "test_lab.py", "test_fault_drills.py", "test_lab_day2.py",
                 "test_lab_selfboot.py", "test_lab_ha.py", "test_lab_bare.py", "test_image_build.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules in LONGEST_FIRST's order (a stable sort: each module's tests keep theirs)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session", autouse=True)
def lab_host() -> None:
    problems = host_problems()
    if problems:
        message = "lab tests need rootful podman, runc and mmdebstrap: " + "; ".join(problems)
        if os.environ.get("CLUSTERFORGE_REQUIRE_LAB") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


CHECKOUT = (sys.executable, "-m", "clusterforge")  # the program the lab tests run, unless a module names another


@dataclass
class Lab:
    name: str
    up_output: str
    program: tuple[str, ...] = CHECKOUT

    def cli(self, *args: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        return clusterforge("lab", *args, "--name", self.name, check=check, timeout=timeout, program=self.program)

    def node_cli(self, command: str, *args: str) -> subprocess.CompletedProcess[str]:
        return clusterforge("lab", command, "--name", self.name, *args, program=self.program)

    def run(self, node: str, script: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """A shell script on a node, over SSH as Ansible reaches it."""
        from clusterforge.lab.paths import LabPaths

        return subprocess.run(["ssh", "-F", str(LabPaths.of(self.name).ssh_config), "-o", "BatchMode=yes", node,
                               script], capture_output=True, text=True, timeout=timeout, check=False)

    def sh(self, node: str, script: str, check: bool = True, timeout: float = 120) -> str:
        proc = self.run(node, script, timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{node}: {script!r} exited {proc.returncode}: {proc.stdout}{proc.stderr}")
        return proc.stdout.strip()

    def status(self) -> dict:
        return json.loads(self.cli("status", "--format", "json").stdout)

    def job(self, job_id: str, on: str = "ctl-0001") -> dict[str, str]:
        """`scontrol show job` as fields (JobState, StartTime, Restarts, ...), asked of the controller `on`."""
        return dict(re.findall(r"(\w+)=(\S*)", self.sh(on, f"scontrol show job {job_id}", check=False)))

    def wait(self, what: str, predicate: Callable[[], bool], timeout: float, every: float = 2) -> float:
        """Until `predicate` holds, asked every `every` seconds; a predicate that logs in to an emulated server
        asks less often (each login is seconds of that server's CPU, taken from what the test waits on)."""
        started = time.monotonic()
        while not predicate():
            if time.monotonic() - started > timeout:
                raise AssertionError(f"{what}: not within {timeout:.0f} s")
            time.sleep(every)
        return time.monotonic() - started


def clusterforge(*args: str, check: bool = True, timeout: float = 900,
                 program: tuple[str, ...] = CHECKOUT) -> subprocess.CompletedProcess[str]:
    # a wide terminal: the lab tests match whole lines of the commands' reports, which wrap at 100 in a pipe
    env = {**os.environ, "COLUMNS": "200"}
    if program != CHECKOUT:  # an installed release: nothing of this checkout on its path, run from elsewhere
        env = {k: v for k, v in env.items() if not k.startswith(("CLUSTERFORGE_ANSIBLE", "ANSIBLE_", "VIRTUAL_ENV"))}
        env["PATH"] = f"{Path(program[0]).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run([*program, *args], cwd=ROOT if program == CHECKOUT else Path(program[0]).parent,
                          capture_output=True, text=True, timeout=timeout, check=False, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"clusterforge {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def leftovers(name: str) -> dict[str, list[str]]:
    """Everything podman still has with this lab's label."""
    label = f"label={LABEL}={name}"
    found = {
        "containers": subprocess.run(["podman", "ps", "-a", "--filter", label, "--format", "{{.Names}}"],
                                     capture_output=True, text=True, check=True).stdout.split(),
        "networks": subprocess.run(["podman", "network", "ls", "--filter", label, "--format", "{{.Name}}"],
                                   capture_output=True, text=True, check=True).stdout.split(),
        "volumes": subprocess.run(["podman", "volume", "ls", "--filter", label, "--format", "{{.Name}}"],
                                  capture_output=True, text=True, check=True).stdout.split(),
    }
    return {kind: names for kind, names in found.items() if names}


def job_hosts(up_output: str) -> list[str]:
    """The hostnames `lab up` printed from its srun job."""
    lines = up_output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("== srun"))
    out = []
    for line in lines[start + 1:]:
        if line.startswith("lab "):
            break
        out.append(line.strip())
    return out


def bring_up(name: str, *args: str, program: tuple[str, ...] = CHECKOUT, timeout: float = 900) -> Iterator[Lab]:
    clusterforge("lab", "down", "--name", name, check=False, program=program)
    try:
        proc = clusterforge("lab", "up", "--name", name, *args, program=program, timeout=timeout)
        yield Lab(name, proc.stdout, program)
    finally:
        clusterforge("lab", "down", "--name", name, check=False, program=program)


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """`clusterforge` of the wheel this checkout builds, installed into a fresh environment outside it (as
    tests/test_release.py installs it): a lab module that brings its lab up with it runs the installed release."""
    from tests.test_release import build, installed_env

    wheel = build(tmp_path_factory.mktemp("dist"))
    root = tmp_path_factory.mktemp("release") / "clusterforge"
    installed_env(root, wheel)
    return (str(root / "bin" / "clusterforge"),)


# What a clean start may still log (docs/lab.md, "clean logs"): slurmctld's notices about the state files
# an empty StateSaveLocation lacks, slurmdbd's first registration of a new cluster, and the race of an
# interactive srun that exits before the controller's completion message reaches it.
FIRST_START = re.compile(
    r"Could not open (node|job|reservation|trigger|resv|assoc|qos|fed_mgr|part)|Trying backup state save file"
    r"|No fed_mgr state file|We can't find assoc 1 on cluster|state file .* missing"
    r"|slurm_send_node_msg: .*SRUN_JOB_COMPLETE.*Connection reset by peer"
    r"|_sync_nodes_to_comp_job|(assoc|qos|usage) state file")
# What a cold start of two controllers (`lab up --ha`) may add, once, on the primary alone (docs/lab.md, "clean
# logs"): as it starts, the primary asks every backup to give up control (`_shutdown_backup_controller` in SLURM's
# src/slurmctld/controller.c, called at every start of a primary), and the backup, started after the primary
# answers, is not listening yet. Started the other way round, the backup logs its own line instead
# (slurm-production reference, section 11: one of the two on every cold start of the pair). Nothing else: not a
# timed-out call (`Socket timed out`: a backup started with the primary), nor slurmdbd refused (`_open_persist_conn`:
# slurmctld started before slurmdbd listened), nor a reply lost to a re-execution (`Unexpected missing socket error`).
HA_FIRST_START = re.compile(r"_shutdown_bu_thread:send/recv ctl-0002: Connection refused$")


# slurmctld times 1,000 gettimeofday() calls as it starts and logs this error past 200 microseconds (slurmctld's
# main(), "Large delays indicate the Linux vDSO is not in use"): on a 2-core machine running two labs, one
# preemption of the daemon during those calls is enough (2,305 microseconds in a CI run of the HA module). It
# measures the host's load at that moment, not anything the roles set up.
CLOCK_READ_LATENCY = re.compile(r"error: High latency for 1000 calls to gettimeofday\(\): \d+ microseconds$")


def error_lines(lab: Lab, node: str, log: str) -> list[str]:
    """The error and fatal lines of a daemon's log, but for the clock-read timing a loaded host causes."""
    text = lab.sh(node, f"cat /var/log/slurm/{log}")
    return [line for line in text.splitlines()
            if re.search(r"\b(error|fatal):", line) and not CLOCK_READ_LATENCY.search(line)]


def real_slurmctld(lab: Lab, slurm_dir: Path, host: str, hosts: str, *then: str) -> tuple[str, str]:
    """Load rendered SLURM files into a real slurmctld 24.11: a throwaway container of the lab's image named
    `host` (the rendered SlurmctldHost), `hosts` appended to its /etc/hosts (node names on loopback, accounting
    through the lab's slurmdbd), `slurmctld -D -i` until it runs as primary or fails. Then the `then` commands run
    against it. Returns (slurmctld's log, the output of `then`)."""
    from clusterforge.lab.paths import LabPaths

    paths = LabPaths.of(lab.name)
    container = f"{lab.name}-acceptance"
    subprocess.run(["podman", "rm", "-f", container], capture_output=True, check=False)
    subprocess.run(["podman", "run", "-d", "--name", container, "--hostname", host, "--network", paths.network,
                    "--no-hosts", "--systemd=always", "--label", f"{LABEL}={lab.name}", lab.status()["image"]],
                   check=True, capture_output=True)
    try:
        def run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["podman", "exec", container, *argv], capture_output=True, text=True,
                                  check=False, timeout=timeout)

        lab.wait("the container booted", lambda: run("systemctl", "is-system-running").stdout.strip() in (
            "running", "degraded"), timeout=60)
        for name in sorted(p.name for p in slurm_dir.iterdir()):
            subprocess.run(["podman", "cp", str(slurm_dir / name), f"{container}:/etc/slurm/{name}"], check=True)
        subprocess.run(["podman", "cp", str(paths.root / "munge.key"), f"{container}:/etc/munge/munge.key"],
                       check=True)
        after = " ; ".join(f"{command} > /tmp/then.out 2>&1" if i == 0 else f"{command} >> /tmp/then.out 2>&1"
                           for i, command in enumerate(then)) or "true"
        script = (f"printf '{hosts}' >> /etc/hosts && chown munge:munge /etc/munge/munge.key && "
                  "chmod 0400 /etc/munge/munge.key && systemctl restart munge && "
                  "install -d -o slurm -g slurm -m 0700 /shared/slurm/state /var/spool/slurmctld && "
                  "install -d -o slurm -g slurm /var/log/slurm && "
                  "(timeout 90 slurmctld -D -i -vv > /tmp/ctld.log 2>&1 &) ; "
                  "for i in $(seq 90); do grep -qE 'Running as primary controller|fatal' /tmp/ctld.log && break; "
                  f"sleep 1; done; {after}; pkill slurmctld; sleep 1; touch /tmp/then.out")
        run("sh", "-c", script, timeout=150)
        return run("cat", "/tmp/ctld.log").stdout, run("cat", "/tmp/then.out").stdout
    finally:
        subprocess.run(["podman", "rm", "-f", "--time", "0", container], capture_output=True, check=False)
