"""The lab as a cloud: target lab's power-save provider talks to the lab's power agent over a Unix socket, and the
agent starts and removes only the nodes of the lab's power-saved pools. podman is faked in memory here (the lab
test in tests/lab/test_lab_selfboot.py runs the real one under slurmctld)."""

from __future__ import annotations

import ipaddress
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.core.errors import ClusterforgeError
from clusterforge.lab import launched, nodes, podman, power_agent, selfboot
from clusterforge.lab.nodes import NodeSpec
from clusterforge.lab.paths import LabPaths
from clusterforge.powersave import agent as power_protocol
from clusterforge.powersave import programs
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.reconcile import reconcile
from clusterforge.powersave.resume import resume
from clusterforge.powersave.slurm import NodeState
from clusterforge.powersave.suspend import suspend
from clusterforge.targets.lab.powersave import LabProvider
from tests.conftest import ROOT
from tests.test_powersave import RecordingSlurm

BURST = ROOT / "clusterforge/lab/data/burst.yaml"
CATALOG = ROOT / "clusterforge/lab/data/catalog.yaml"
ALLOWED = {f"burst-000{i}": NodeSpec(f"burst-000{i}", ("pool_burst", "slurm_compute"), f"10.89.0.{12 + i}")
           for i in (1, 2, 3)}


class FakePodman:
    """Containers by name with their labels and state; `fail` names nodes whose start fails."""

    def __init__(self) -> None:
        self.containers: dict[str, dict[str, Any]] = {}
        self.fail: set[str] = set()
        self.slurm_uid = "64030"

    def run(self, args: list[str], check: bool = True, **_: Any) -> Any:
        from subprocess import CompletedProcess

        if args[0] == "ps":
            items = [{"Names": [name], "Labels": c["labels"], "State": c["state"]}
                     for name, c in self.containers.items()]
            return CompletedProcess(args, 0, json.dumps(items), "")
        if args[0] == "rm":
            for name in args[1:]:
                self.containers.pop(name, None)
            return CompletedProcess(args, 0, "", "")
        if args[0] == "exec":
            return CompletedProcess(args, 0, self.slurm_uid + "\n", "")
        raise AssertionError(args)

    def start(self, paths: LabPaths, specs: list[NodeSpec], image: str, repo: str, **options: Any) -> None:
        assert options["restart"] is False and "io.clusterforge.lab.launched=true" in options["labels"]
        for spec in specs:
            if spec.name in self.fail:
                raise ClusterforgeError(podman_problem())
            self.containers[paths.container(spec.name)] = {
                "labels": {"io.clusterforge.lab": paths.name, "io.clusterforge.lab.node": spec.name,
                           "io.clusterforge.lab.launched": "true"}, "state": "running", "image": image}


def podman_problem() -> Any:
    from clusterforge.core.errors import Problem

    return Problem("podman run failed: no space left on device", "podman")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakePodman:
    made = FakePodman()
    monkeypatch.setattr(podman, "run", made.run)
    monkeypatch.setattr(nodes, "start", made.start)
    monkeypatch.setattr(nodes, "close_ssh", lambda paths, names: None)
    monkeypatch.setattr(selfboot, "clear_status", lambda paths, names: None)
    return made


@pytest.fixture
def agent(fake: FakePodman, tmp_path: Path) -> Iterator[tuple[power_agent.Agent, str]]:
    made = object.__new__(power_agent.Agent)
    made.paths = LabPaths("cf-test", tmp_path)
    made.allowed = dict(ALLOWED)
    made.image = "localhost/cf-lab-baked:test"
    made.controller = "cf-test-ctl-0001"
    made.given = selfboot.Given((), ())
    made.repo = str(tmp_path)
    made.lock = threading.Lock()
    made._slurm_uid = None
    socket_path = str(tmp_path / "agent.sock")
    server = power_agent._Server(socket_path, made)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield made, socket_path
    server.shutdown()
    server.server_close()


def config(static: str = "burst-0001") -> PowerSaveConfig:
    group = NodeGroup(name="burst", nodes="burst-[0001-0003]", static=static)
    return PowerSaveConfig(cluster="lab", provider=launched.PROVIDER, groups=(group,))


def test_resume_starts_containers_at_their_addresses_once_and_suspend_removes_them(agent, fake) -> None:
    _, path = agent
    provider = LabProvider(config(), path)
    slurm = RecordingSlurm()
    done = resume(config(), provider, slurm, ["burst-0002", "burst-0003"], sleep=lambda s: None)
    assert sorted(fake.containers) == ["cf-test-burst-0002", "cf-test-burst-0003"]
    assert slurm.addresses == {"burst-0002": "10.89.0.14", "burst-0003": "10.89.0.15"}
    again = resume(config(), provider, RecordingSlurm(), ["burst-0002"], sleep=lambda s: None)
    assert (again.already, len(again.launched), len(fake.containers)) == (1, 0, 2)
    gone = suspend(provider, ["burst-0002"])
    assert [i.node for i in gone] == ["burst-0002"] and sorted(fake.containers) == ["cf-test-burst-0003"]
    assert done.summary()[0].startswith("resume: 2 nodes asked, 0 already had an instance, 2 launched")


def test_a_killed_container_is_impaired_and_reconcile_replaces_it(agent, fake) -> None:
    _, path = agent
    provider = LabProvider(config(), path)
    resume(config(), provider, RecordingSlurm(), ["burst-0002"], sleep=lambda s: None)
    fake.containers["cf-test-burst-0002"]["state"] = "exited"  # podman kill: no restart policy, it stays dead
    assert provider.find(["burst-0002"]) == {}  # not live: the next resume starts a new one
    slurm = RecordingSlurm({"burst-0002": NodeState("allocated")})
    done = reconcile(config(static=""), provider, slurm, now=__import__("datetime").datetime.now())
    assert done.replaced == {"burst-0002": "failed its status check"}
    assert "burst-0002" in slurm.powered_down and fake.containers == {}


def test_the_agent_starts_only_the_lab_s_power_saved_nodes(agent, fake) -> None:
    _, path = agent
    with pytest.raises(ClusterforgeError, match="not nodes of the lab's power-saved pools: ctl-0001"):
        power_protocol.ask(path, {"op": "launch", "group": "burst", "nodes": ["ctl-0001"], "minimum": 0})
    with pytest.raises(ClusterforgeError, match="unknown op"):
        power_protocol.ask(path, {"op": "exec", "command": "rm -rf /"})
    with pytest.raises(ClusterforgeError, match="request too large"):
        power_protocol.ask(path, {"op": "find", "nodes": "x" * (power_agent.MAX_REQUEST + 10)})
    fake.containers["cf-other-node-0001"] = {"labels": {"io.clusterforge.lab.node": "node-0001"}, "state": "running"}
    power_protocol.ask(path, {"op": "terminate", "ids": ["cf-other-node-0001"]})
    assert "cf-other-node-0001" in fake.containers  # not one of this lab's power-saved nodes: left alone
    assert fake.containers.keys() == {"cf-other-node-0001"}


def test_all_or_nothing_gives_back_what_started_when_one_node_cannot(agent, fake) -> None:
    _, path = agent
    fake.fail = {"burst-0003"}
    slurm = RecordingSlurm()
    done = resume(config(), LabProvider(config(), path), slurm, ["burst-0002", "burst-0003"],
                  jobs=[["burst-0002", "burst-0003"]], sleep=lambda s: None)
    assert fake.containers == {} and not done.launched
    assert set(slurm.down) == {"burst-0002", "burst-0003"}
    assert "InsufficientInstanceCapacity" in slurm.down["burst-0002"]


def test_only_root_and_the_controllers_slurm_user_may_ask(agent, fake) -> None:
    made, _ = agent
    assert made.permitted(0) and made.permitted(64030)
    assert not made.permitted(1000)  # a job's user on the controller


def test_without_an_agent_the_program_exits_2_with_the_socket(tmp_path, monkeypatch, caplog) -> None:
    file = tmp_path / "ps.json"
    file.write_text(config().model_dump_json())
    monkeypatch.setenv("CLUSTERFORGE_LAB_POWER", str(tmp_path / "none.sock"))
    assert programs.resume_main(["burst-0002", "--config", str(file)]) == 2
    assert "none.sock: cannot reach the lab's power agent" in caplog.text


def test_the_lab_addresses_power_saved_nodes_after_the_others_in_their_pool_group(tmp_path) -> None:
    from clusterforge.lab.render import render

    render(BURST, [CATALOG], None, tmp_path / "render")
    found = launched.specs(tmp_path / "render", ipaddress.IPv4Network("10.89.0.0/24"), after=3)
    assert [(s.name, s.ip, s.groups) for s in found] == [
        (f"burst-000{i}", f"10.89.0.{12 + i}", ("pool_burst", "slurm_compute")) for i in (1, 2, 3)]
    boot = selfboot.write_boot_dir(LabPaths("cf-test", tmp_path), "lab", "ctl-0001",
                                   [NodeSpec("ctl-0001", ("slurm_controller",), "10.89.0.10")], {}, found)
    inventory = yaml.safe_load((boot / "nodes.yml").read_text())
    assert inventory["all"]["hosts"]["burst-0003"] == {"node_ip": "10.89.0.15",
                                                       "slurm_config_dir": "/etc/clusterforge/boot/render/slurm"}
    assert set(inventory["all"]["children"]["pool_burst"]["hosts"]) == {"burst-0001", "burst-0002", "burst-0003"}
    with pytest.raises(ClusterforgeError, match="do not fit"):
        launched.specs(tmp_path / "render", ipaddress.IPv4Network("10.89.0.0/28"), after=3)


def test_a_cluster_on_target_lab_and_a_lab_pool_without_max_count_are_refused(tmp_path, cli) -> None:
    text = BURST.read_text().replace("bmc: redfish", "target: lab")  # the burst pool on target lab
    assert "target: lab" in text
    (tmp_path / "whole.yaml").write_text(text.replace("target: onprem", "target: lab", 1))
    (tmp_path / "fixed.yaml").write_text(text.replace("count: 1, max_count: 3", "count: 3"))
    for name, words in (("whole.yaml", "target lab is for power-saved pools"), ("fixed.yaml", "has no max_count")):
        result = cli("check", str(tmp_path / name), "--catalog", str(CATALOG))
        assert result.exit_code == 2 and words in result.output, result.output


def test_a_client_that_never_finishes_its_request_is_cut_off(agent, monkeypatch) -> None:
    import socket

    monkeypatch.setattr(power_agent._Handler, "timeout", 0.5)
    _, path = agent
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(path)
        conn.sendall(b'{"op": "find"')  # and never shuts down its side
        answer = json.loads(conn.recv(65536))
    assert "timed out" in answer["error"]
    assert power_protocol.ask(path, {"op": "everything"}) == {"instances": []}  # the agent still answers


def test_growing_a_lab_never_gives_a_new_node_a_power_saved_node_s_address() -> None:
    from clusterforge.lab.day2 import free_addresses
    from clusterforge.lab.state import LabState, Node

    lab = LabState("cf-test", "b.yaml", (), "img", "net", "ctl-0001",
                   (Node("ctl-0001", "c", "10.89.0.10", ()), Node("node-0001", "c", "10.89.0.11", ())),
                   (Node("burst-0001", "c", "10.89.0.12", ()), Node("burst-0002", "c", "10.89.0.13", ())))
    free = free_addresses(lab, ipaddress.IPv4Network("10.89.0.0/24"))
    assert [next(free), next(free)] == ["10.89.0.14", "10.89.0.15"]
    assert LabState.from_json(lab.to_json()) == lab  # the state file keeps them


def test_lab_start_brings_back_a_power_agent_that_is_gone_and_leaves_a_running_one(tmp_path, monkeypatch) -> None:
    """A reboot of the lab's host ends the agent; `lab start` (cluster.power on) starts it again, once."""
    from clusterforge.lab import cluster, state

    paths = LabPaths("cf-test", tmp_path)
    node = state.Node("ctl-0001", "cf-test-ctl-0001", "10.89.0.2", ("slurm_controller",))
    burst = state.Node("burst-0002", "cf-test-burst-0002", "10.89.0.9", ("burst",))
    state.save(paths, state.LabState("cf-test", "bp.yaml", (), "img", "net", "ctl-0001", (node,), (burst,)))
    monkeypatch.setattr(cluster, "running_containers", lambda paths: {"cf-test-ctl-0001"})
    started: list[str] = []
    pid: list[int] = []
    monkeypatch.setattr(power_agent, "running_pid", lambda paths: pid[0] if pid else None)
    monkeypatch.setattr(power_agent, "start", lambda paths: started.append(paths.name) or pid.append(4321) or 4321)
    said: list[str] = []
    assert cluster.power(paths, [], on=True, say=said.append) == []  # every node already runs
    assert started == ["cf-test"] and "power agent started again" in said[0]
    cluster.power(paths, [], on=True, say=said.append)
    assert started == ["cf-test"]  # it runs now: not started twice
    pid.clear()
    monkeypatch.setattr(cluster, "running_containers", lambda paths: set())
    cluster.power(paths, [], on=False, say=said.append)  # powering off never starts it
    assert started == ["cf-test"]


def raw_ask(path: str, data: bytes) -> dict[str, Any]:
    """Bytes the provider could never send (json.dumps recurses too), as one request; the agent's answer."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(path)
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        answer: dict[str, Any] = json.loads(conn.recv(65536))
    return answer


def test_a_deeply_nested_request_is_refused_before_json_loads_recurses(agent, caplog) -> None:
    _, path = agent
    deep = raw_ask(path, b"[" * 100_000)
    assert deep == {"error": f"request nested more than {power_agent.MAX_DEPTH} deep"}
    assert caplog.text.count("refused: request nested") == 1
    assert raw_ask(path, b'{"a": ' * 9 + b"1" + b"}" * 9)["error"].startswith("request nested")
    brackets_in_strings = b'{"op": "find", "nodes": ["' + b"[{" * 1000 + b'\\"[["]}'
    assert raw_ask(path, brackets_in_strings) == {"instances": []}  # inside a string a bracket nests nothing
    as_deep_as_allowed = b'{"op": "find", "nodes": ' + b"[" * 7 + b'"burst-0001"' + b"]" * 7 + b"}"
    assert raw_ask(path, as_deep_as_allowed) == {"instances": []}
    assert power_protocol.ask(path, {"op": "everything"}) == {"instances": []}  # the agent still answers


def test_a_client_dripping_its_request_is_cut_off_at_the_whole_request_deadline(agent, monkeypatch) -> None:
    import contextlib
    import socket
    import time

    monkeypatch.setattr(power_agent._Handler, "timeout", 1.0)
    _, path = agent
    began = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(0.3)  # a byte every 0.3 s: each read of the agent's gets one well within its 1 s
        conn.connect(path)
        conn.sendall(b'{"op": "find"')
        answer = b""
        while not answer and time.monotonic() - began < 6:
            try:
                answer = conn.recv(65536)
            except TimeoutError:
                with contextlib.suppress(OSError):  # cut off between our read and this write: the answer waits
                    conn.sendall(b" ")
    assert answer, "the dripping client was never cut off"
    assert "timed out: no whole request within 1 s" in json.loads(answer)["error"]
    assert time.monotonic() - began < 3
    assert power_protocol.ask(path, {"op": "everything"}) == {"instances": []}


def test_past_max_clients_a_connection_is_refused_at_once_without_a_thread(agent, monkeypatch) -> None:
    import socket
    import time

    monkeypatch.setattr(power_agent._Server, "max_clients", 4)
    _, path = agent

    def handlers() -> int:  # the agent's threads for connections (socketserver names them by their target)
        return sum("process_request_thread" in t.name for t in threading.enumerate())

    before = threading.active_count()
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(4)]
    try:
        for conn in idle:
            conn.connect(path)  # and sends nothing: each holds a handler thread in its read
        deadline = time.monotonic() + 5
        while handlers() < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert handlers() == 4
        for _ in range(20):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(5)
                conn.connect(path)
                assert json.loads(conn.recv(65536)) == {"error": "busy: 4 clients at once, try again"}
        assert handlers() == 4 and threading.active_count() <= before + 4
    finally:
        for conn in idle:
            conn.close()
    deadline = time.monotonic() + 5
    while handlers() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert power_protocol.ask(path, {"op": "everything"}) == {"instances": []}  # their slots are free again
