"""The lab's BMCs (clusterforge/lab/bmc_service.py, lab/bmc_power.py): the power agent's Redfish side runs the real
sushy-tools emulator, target onprem's provider powers the lab's burst servers through it exactly as it would real
ones, and each change the emulator notifies reaches the agent, from that emulator only. The agent's containers are
a recording stand-in here; tests/lab/test_lab_selfboot.py runs the real ones under slurmctld."""

from __future__ import annotations

import ipaddress
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
import yaml

pytest.importorskip("sushy_tools")

from clusterforge.bmc import hosts
from clusterforge.core.errors import ClusterforgeError
from clusterforge.lab import bmc_service
from clusterforge.lab.bmc_power import BmcSide, holds, socket_inode
from clusterforge.lab.nodes import NodeSpec
from clusterforge.lab.paths import LabPaths
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.targets.onprem import powersave as onprem
from clusterforge.targets.onprem.powersave import BmcProvider

SPECS = [NodeSpec(f"burst-000{i}", ("pool_burst", "slurm_compute"), f"127.0.0.{12 + i}") for i in (1, 2, 3)]
LOOPBACK = ipaddress.IPv4Network("127.0.0.0/24")  # its "gateway" is 127.0.0.1: the emulator stays on loopback


class Recorded:
    """The agent as the Redfish side sees it: the changes notified, in order."""

    def __init__(self) -> None:
        self.changes: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def knows(self, node: str) -> bool:
        return node in {s.name for s in SPECS}

    def power_changed(self, node: str, power: str) -> None:
        with self.lock:
            self.changes.append((node, power))


def until(what: str, predicate: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)


@pytest.fixture
def side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[BmcSide, Recorded]]:
    files = bmc_service.prepare(LabPaths("cf-test", tmp_path), SPECS, LOOPBACK, bmc_service.emulator_program())
    agent = Recorded()
    made = BmcSide(agent, files)
    made.start()
    login = yaml.safe_load(files.credentials.read_text())
    until("the emulator answering", lambda: made.emulator_pid() is not None)
    bmc_service.wait_ready(made.url, 3, (login["username"], login["password"]))
    monkeypatch.setenv("CLUSTERFORGE_BMCS", str(files.document))
    monkeypatch.setenv("CLUSTERFORGE_BMC_CREDENTIALS", str(files.credentials))
    monkeypatch.setattr(onprem, "SETTLE_S", 60.0)
    yield made, agent
    made.stop()


def config() -> PowerSaveConfig:
    group = NodeGroup(name="burst", nodes="burst-[0001-0003]", static="burst-0001")
    return PowerSaveConfig(cluster="lab", provider="onprem", groups=(group,))


def test_the_lab_writes_a_bmc_document_the_provider_reads_and_a_login_for_its_owner_alone(tmp_path: Path) -> None:
    files = bmc_service.prepare(LabPaths("cf-test", tmp_path), SPECS, ipaddress.IPv4Network("10.89.0.0/24"),
                                bmc_service.emulator_program())
    found = hosts.load(files.document)
    assert sorted(found) == ["burst-0001", "burst-0002", "burst-0003"]
    assert {t.url.rsplit(":", 1)[0] for t in found.values()} == {"http://10.89.0.1"}  # the lab bridge's gateway
    assert len({t.system for t in found.values()}) == 3
    assert found["burst-0002"].system == bmc_service.system_id("cf-test", "burst-0002")
    for secret in (files.credentials, files.htpasswd):
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert "password" not in files.document.read_text()


def test_the_login_digest_is_made_by_the_emulators_environment_not_this_one(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed release without the `lab` extra has no bcrypt (sushy-tools' dependency): the metal lab's
    emulator has an environment of its own, and its Python makes the digest. Here this process cannot import
    bcrypt at all, and the emulator's Python still makes a digest that checks against the password."""
    import sys

    monkeypatch.setitem(sys.modules, "bcrypt", None)  # `import bcrypt` raises ImportError in this process
    files = bmc_service.prepare(LabPaths("cf-test", tmp_path), SPECS, LOOPBACK, bmc_service.emulator_program())
    password = yaml.safe_load(files.credentials.read_text())["password"]
    user, digest = files.htpasswd.read_text().strip().split(":", 1)
    assert user == bmc_service.USER and digest.startswith("$2")
    monkeypatch.delitem(sys.modules, "bcrypt")
    import bcrypt

    assert bcrypt.checkpw(password.encode(), digest.encode())
    assert password not in files.htpasswd.read_text()


def test_the_emulators_python_is_the_one_its_script_names(tmp_path: Path) -> None:
    """pip writes the environment's interpreter on a console script's first line; where that line names none
    (pip's long-path form runs /bin/sh), the `python` beside the script."""
    program = tmp_path / "bin" / "sushy-emulator"
    program.parent.mkdir()
    program.write_text("#!/opt/env/bin/python3.11 -I\nimport sys\n")
    assert bmc_service.emulator_python(program) == Path("/opt/env/bin/python3.11")
    program.write_text("#!/bin/sh\n'''exec' \"/long/path/python\" \"$0\" \"$@\"\n' '''\n")
    assert bmc_service.emulator_python(program) == program.with_name("python")


def test_an_emulator_whose_python_cannot_hash_or_run_is_one_named_error(tmp_path: Path) -> None:
    program = tmp_path / "bin" / "sushy-emulator"
    program.parent.mkdir()
    program.write_text("#!/bin/false\n")  # not a Python: the one beside it is asked, and it fails
    (program.parent / "python").symlink_to("/bin/false")
    with pytest.raises(ClusterforgeError) as raised:
        bmc_service.login_digest(program, "secret")
    assert "could not make the login's digest" in raised.value.problems[0].message
    (program.parent / "python").unlink()
    with pytest.raises(ClusterforgeError) as raised:
        bmc_service.login_digest(program, "secret")
    assert "did not run" in raised.value.problems[0].message


def test_no_emulator_in_this_environment_says_which_extra_brings_it(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bmc_service.sys, "executable", str(tmp_path / "bin" / "python"))
    with pytest.raises(ClusterforgeError) as raised:
        bmc_service.emulator_program()
    problem = raised.value.problems[0]
    assert "sushy-tools" in problem.message and "`lab` extra" in (problem.hint or "")


def test_the_provider_powers_lab_servers_through_the_emulator_and_the_agent_hears_each_change(side) -> None:
    _, agent = side
    provider = BmcProvider(config())
    launch = provider.launch(config().groups[0], ["burst-0002", "burst-0003"], 2)
    assert sorted(launch.instances) == ["burst-0002", "burst-0003"] and not launch.failed
    until("both On notified", lambda: {("burst-0002", "On"), ("burst-0003", "On")} <= set(agent.changes))
    assert not [c for c in agent.changes if c[0] == "burst-0001"]  # a server not asked is not powered
    provider.terminate([launch.instances["burst-0003"]])
    until("burst-0003 Off notified", lambda: ("burst-0003", "Off") in agent.changes)
    assert agent.changes.index(("burst-0003", "On")) < agent.changes.index(("burst-0003", "Off"))
    assert ("burst-0002", "Off") not in agent.changes


def test_only_the_emulator_may_notify(side) -> None:
    made, agent = side
    before = list(agent.changes)
    notify = f"http://127.0.0.1:{made.server.server_address[1]}/notify"
    answer = requests.put(notify, json={"name": "burst-0002", "power_state": "On"}, timeout=10)
    assert answer.status_code == 403
    time.sleep(0.5)
    assert agent.changes == before


def test_a_loopback_socket_is_found_in_the_kernels_table_and_in_its_holders_files() -> None:
    import os
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        inode = socket_inode(client.getsockname(), server.getsockname())
        assert inode is not None and holds(os.getpid(), inode)
        assert socket_inode(client.getsockname(), ("127.0.0.1", 1)) is None
        assert not holds(1, inode)  # another process does not hold it
