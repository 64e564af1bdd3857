"""The lab's power agent: the lab's answer to EC2 for the power-save programs on its controller.

slurmctld on the lab's controller runs clusterforge-resume and clusterforge-suspend (and the reconcile timer runs
clusterforge-reconcile) with target lab's provider (clusterforge/targets/lab/powersave.py), which asks this agent
over a Unix socket in a folder mounted into the controller only (the protocol: clusterforge/powersave/agent.py). The
agent, a process of its own on the machine that runs the lab (started by `lab up`, stopped by `lab down`), starts
a node container from the lab's baked image for each node asked, given what it needs to configure itself
(lab/selfboot.py) and no restart policy, so that a container that dies stays dead until reconcile replaces it, as a
failed instance does; it removes them on suspend.

What a request may do is bounded by what the lab wrote, not by what the controller sends: only the nodes of the
lab's state (`LabState.launched`, the power-saved pools of the lab's render), only this lab's containers, and only
for root or the controller's slurm user (the socket's peer credentials).

What a client may cost the agent is bounded too, each bound refused with an `{"error": ...}` answer and one warning
line: a request of at most `MAX_REQUEST` bytes, nested at most `MAX_DEPTH` arrays or objects deep (checked before
json.loads, which recurses), whole within `REQUEST_DEADLINE_S` of the agent starting to read it (a deadline for the
whole read, not for each recv), and at most `MAX_CLIENTS` connections handled at once (see `_Server`); the BMC
emulator's notifications (lab/bmc_power.py) are bounded the same way, by the same code (lab/bounded_server.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clusterforge.core import hostlist
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab import launched, nodes, podman, selfboot, state
from clusterforge.lab.bmc_power import BmcSide
from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.bounded_json import MAX_DEPTH, too_deep
from clusterforge.lab.bounded_server import MAX_CLIENTS, BoundedThreadingMixIn, DeadlineReader
from clusterforge.lab.paths import LABEL, LabPaths
from clusterforge.powersave import agent as protocol
from clusterforge.powersave.provider import INSUFFICIENT_CAPACITY, Instance

LAUNCHED = f"{LABEL}.launched"
MAX_REQUEST = 1024 * 1024  # a launch of every node of a large pool is a few hundred kilobytes
REQUEST_DEADLINE_S = 60.0  # the whole request, from the first read to the client's end of it
log = logging.getLogger("clusterforge.lab.power_agent")


class Agent:
    """Starts, finds and removes the containers of one lab's power-saved nodes."""

    def __init__(self, paths: LabPaths) -> None:
        lab = state.require(paths)
        self.paths = paths
        self.allowed = {n.name: nodes.NodeSpec(n.name, n.groups, n.ip) for n in lab.launched}
        self.image = lab.image
        self.controller = paths.container(lab.controller)
        self.given = selfboot.Given.of(paths, paths.root / "boot")
        self.repo = str(paths.repo)
        self.lock = threading.Lock()
        self._slurm_uid: int | None = None

    def permitted(self, uid: int) -> bool:
        """Root, or the controller's slurm user (slurmctld runs the programs as SlurmUser): not a job's user."""
        if uid == 0:
            return True
        if self._slurm_uid is None:
            found = podman.run(["exec", self.controller, "id", "-u", "slurm"], check=False, timeout=30)
            if found.returncode != 0 or not found.stdout.strip().isdigit():
                return False
            self._slurm_uid = int(found.stdout.strip())
        return uid == self._slurm_uid

    def containers(self) -> list[Instance]:
        """Every container of this lab's power-saved nodes, running or not."""
        out = podman.run(["ps", "-a", "--filter", f"label={LABEL}={self.paths.name}", "--filter",
                          f"label={LAUNCHED}=true", "--format", "json"]).stdout
        found = []
        for item in json.loads(out or "[]"):
            node = str((item.get("Labels") or {}).get(f"{LABEL}.node", ""))
            if node in self.allowed:
                state_word = "running" if str(item.get("State", "")).lower() == "running" else "stopped"
                found.append(Instance(str(item["Names"][0]), node, self.allowed[node].ip, state_word))
        return found

    def _start(self, spec: nodes.NodeSpec) -> None:
        container = self.paths.container(spec.name)
        podman.run(["rm", "--force", "--time", "0", container], check=False)  # a dead one of the same name
        selfboot.clear_status(self.paths, [spec.name])
        nodes.start(self.paths, [spec], self.image, self.repo, given=self.given.mounts, restart=False,
                    labels=(f"{LAUNCHED}=true",))

    def launch(self, group: str, asked: Sequence[str], minimum: int) -> dict[str, Any]:
        unknown = [n for n in asked if n not in self.allowed]
        if unknown:
            raise ClusterforgeError(Problem(f"not nodes of the lab's power-saved pools: {hostlist.compress(unknown)}"))
        started: list[Instance] = []
        failed: dict[str, str] = {}
        for node in asked:
            try:
                self._start(self.allowed[node])
                started.append(Instance(self.paths.container(node), node, self.allowed[node].ip))
            except ClusterforgeError as exc:  # the lab's stand-in for a lack of capacity: no container
                failed[node] = f"{INSUFFICIENT_CAPACITY}: {exc.problems[0].message}"[:200]
        if failed and len(started) < minimum:
            self.terminate([i.id for i in started])
            reason = next(iter(failed.values()))
            return {"instances": [], "failed": dict.fromkeys(asked, reason)}
        log.info("launch %s: %d started%s", group, len(started),
                 f", {len(failed)} failed: {hostlist.compress(list(failed))}" if failed else "")
        return {"instances": [protocol.instance_to_json(i) for i in started], "failed": failed}

    def knows(self, node: str) -> bool:
        return node in self.allowed

    def power_changed(self, node: str, power: str) -> None:
        """A node's BMC reports its server On or Off (lab/bmc_power.py): its container is started or removed, once
        (a container already running is kept; a server Off has none)."""
        with self.lock:
            present = {i.node: i for i in self.containers()}
            if power == "On" and (node not in present or present[node].state != "running"):
                self._start(self.allowed[node])
                log.info("%s powered on: container started", node)
            elif power == "Off" and node in present:
                self.terminate([present[node].id])
                log.info("%s powered off: container removed", node)

    def terminate(self, ids: Sequence[str]) -> dict[str, Any]:
        ours = {i.id for i in self.containers()}
        gone = [i for i in ids if i in ours]
        if gone:
            nodes.close_ssh(self.paths, [i.removeprefix(f"{self.paths.name}-") for i in gone])
            podman.run(["rm", "--force", "--time", "0", *gone])
            log.info("terminate: %d containers", len(gone))
        return {}

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op not in protocol.OPS:
            raise ClusterforgeError(Problem(f"unknown op {op!r}"))
        with self.lock:
            if op == "launch":
                return self.launch(str(request.get("group", "")), [str(n) for n in request.get("nodes", [])],
                                   int(request.get("minimum", 0)))
            if op == "terminate":
                return self.terminate([str(i) for i in request.get("ids", [])])
            everything = self.containers()
            if op == "find":
                asked = {str(n) for n in request.get("nodes", [])}
                chosen = [i for i in everything if i.node in asked and i.state == "running"]
            elif op == "impaired":
                chosen = [i for i in everything if i.state != "running"]
            else:
                chosen = everything
            return {"instances": [protocol.instance_to_json(i) for i in chosen]}


class _Handler(socketserver.StreamRequestHandler):
    server: _Server
    timeout = REQUEST_DEADLINE_S  # the whole request's deadline, and the whole answer's (sendall's timeout)

    def read_request(self) -> bytes:
        """The client's bytes to its end of the connection, whole within `timeout` however slowly they come."""
        reader = DeadlineReader(self.connection, self.timeout, MAX_REQUEST)
        chunks: list[bytes] = []
        while chunk := reader.read(65536):
            chunks.append(chunk)
        return b"".join(chunks)

    def handle(self) -> None:
        creds = self.request.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        try:
            if not self.server.agent.permitted(uid):
                raise ClusterforgeError(Problem(f"uid {uid} may not power lab nodes (root or slurm only)"))
            raw = self.read_request()
            if too_deep(raw):
                raise ClusterforgeError(Problem(f"request nested more than {MAX_DEPTH} deep"))
            request = json.loads(raw)
            if not isinstance(request, dict):
                raise ClusterforgeError(Problem("a request is a JSON object"))
            answer = self.server.agent.answer(request)
        except (ClusterforgeError, ValueError, TypeError, OSError) as exc:
            message = exc.problems[0].message if isinstance(exc, ClusterforgeError) else str(exc)
            log.warning("refused: %s", message)
            answer = {"error": message}
        except Exception as exc:  # a fault of the agent's (podman hung, say): answered, never out of the thread
            log.warning("failed: %s: %s", type(exc).__name__, exc)
            answer = {"error": f"the agent failed: {type(exc).__name__}: {exc}"}
        try:
            self.connection.settimeout(self.timeout)  # a client that does not read its answer is cut off too
            self.wfile.write(json.dumps(answer).encode() + b"\n")
        except OSError as exc:  # the client went away: nothing to tell it
            log.warning("could not answer: %s", exc)


class _Server(BoundedThreadingMixIn, socketserver.UnixStreamServer):
    """One thread per connection, at most `max_clients` at once: past that, a connection is answered an error at
    once from the accepting thread and closed, with no thread started and nothing read (lab/bounded_server.py).

    An error at once lets the program exit 2 (slurmctld marks its nodes DOWN, reconcile and the next resume try
    again). Only root and slurm can hold a slot for the deadline: others are answered before their request is read.
    """

    max_clients = MAX_CLIENTS

    def __init__(self, path: str, agent: Agent) -> None:
        self.agent = agent
        super().__init__(path, _Handler)

    def busy_answer(self, message: str) -> bytes:
        return json.dumps({"error": message}).encode() + b"\n"


def socket_path(paths: LabPaths) -> Path:
    return launched.folder(paths) / Path(protocol.SOCKET).name


def pid_file(paths: LabPaths) -> Path:
    return launched.folder(paths) / "agent.pid"


def serve(paths: LabPaths) -> None:
    """Answer until SIGTERM (`lab down`): the BMC emulator's notifications where `lab up` prepared the lab's BMCs
    (its power-saved pools are on-prem servers with `bmc: redfish`), else the `lab` provider's socket."""
    agent = Agent(paths)
    files = BmcFiles.of(paths)
    if files.settings.is_file():
        serve_bmcs(paths, agent, files)
        return
    path = socket_path(paths)
    path.unlink(missing_ok=True)
    server = _Server(str(path), agent)
    os.chmod(path, 0o666)  # the peer's credentials decide, not the mode: slurm's uid is the container's
    pid_file(paths).write_text(f"{os.getpid()}\n", encoding="utf-8")

    def stop(_signum: int, _frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    log.info("serving lab %s on %s: %d power-saved nodes", paths.name, path, len(agent.allowed))
    try:
        server.serve_forever()
    finally:
        server.server_close()
        path.unlink(missing_ok=True)
        pid_file(paths).unlink(missing_ok=True)


def serve_bmcs(paths: LabPaths, agent: Agent, files: BmcFiles) -> None:
    """The Redfish side (lab/bmc_power.py) until SIGTERM: no socket, nothing but the emulator starts a node."""
    side = BmcSide(agent, files)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: done.set())
    side.start()
    pid_file(paths).write_text(f"{os.getpid()}\n", encoding="utf-8")
    log.info("serving lab %s's BMCs: %d power-saved nodes", paths.name, len(agent.allowed))
    try:
        done.wait()
    finally:
        side.stop()
        pid_file(paths).unlink(missing_ok=True)


def running_pid(paths: LabPaths) -> int | None:
    try:
        pid = int(pid_file(paths).read_text(encoding="utf-8").strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def start(paths: LabPaths, timeout: float = 20) -> int:
    """Start the agent in a session of its own (it outlives `lab up`); its pid once its socket answers."""
    pid = running_pid(paths)
    if pid is not None:
        return pid
    launched.folder(paths).mkdir(parents=True, exist_ok=True)
    with open(launched.folder(paths) / "agent.log", "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "clusterforge.lab.power_agent", paths.name],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running_pid(paths) == proc.pid:  # written once it answers (its socket, or its BMCs' listener)
            return proc.pid
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise ClusterforgeError(Problem("the lab's power agent did not start", str(launched.folder(paths) / "agent.log")))


def stop(paths: LabPaths, timeout: float = 10) -> bool:
    """Stop the agent if it runs; whether it did."""
    pid = running_pid(paths)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and running_pid(paths) == pid:
        time.sleep(0.1)
    if running_pid(paths) == pid:
        os.kill(pid, signal.SIGKILL)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clusterforge.lab.power_agent",
                                     description="The lab's power agent (started by `clusterforge lab up`).")
    parser.add_argument("name", help="the lab's name")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    try:
        serve(LabPaths.of(args.name))
    except ClusterforgeError as exc:
        for problem in exc.problems:
            log.error(problem.render())
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
