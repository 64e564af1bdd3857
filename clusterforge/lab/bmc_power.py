"""The power agent's Redfish side: the lab's BMC emulator (lab/bmc_service.py) runs as the agent's child, and each
power change it notifies becomes a container started or removed.

The emulator PUTs a system (its name, `power_state`, and `pending_power` while a change waits to apply) to a URL on
this machine's loopback. Only that emulator may: the agent finds the connecting socket in /proc/net/tcp and
answers only when the emulator process holds it (the peer's credentials, as the Unix socket's SO_PEERCRED gives
them for the `lab` provider's requests), checked before a byte of the request is read. A notification is bounded
as the `lab` provider's requests are, by the same code (lab/bounded_server.py): in size (headers and body) and
depth, in time (one deadline for the whole request, not one per read), and in connections handled at once (past
the cap, one is answered 503 at once, with no thread).
The work happens on one worker thread, in the order notified, so the emulator's request is answered at once: a
real BMC reports a server On before its operating system boots, and slurmctld's ResumeTimeout covers the boot.

The emulator listens on the lab network's gateway, which exists only once a container is on the network: the
agent starts it when the address can be bound, and again if it exits.
"""

from __future__ import annotations

import http.server
import io
import json
import logging
import os
import queue
import socket
import subprocess
import threading
import time
from http import HTTPStatus
from typing import Any, Protocol

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab import bmc_service
from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.bounded_json import too_deep
from clusterforge.lab.bounded_server import BoundedThreadingMixIn, DeadlineReader, RequestTimedOut, RequestTooLarge

log = logging.getLogger("clusterforge.lab.power_agent")
MAX_REQUEST = 64 * 1024  # a notification's body: one system's JSON is under a kilobyte
MAX_HEADERS = 16 * 1024  # its request line and headers: the emulator's (requests') are a few hundred bytes
REQUEST_DEADLINE_S = 30.0  # the whole request, from the first read to its body's last byte
DRAIN_S = 0.25  # how long a refused client's unread request is read and dropped before its connection is closed
RESTART_S = 2.0


class Powered(Protocol):
    """What the agent does for a notified change (lab/power_agent.Agent)."""

    def power_changed(self, node: str, power: str) -> None: ...

    def knows(self, node: str) -> bool: ...


def socket_inode(client: tuple[str, int], server: tuple[str, int], table: str = "/proc/net/tcp") -> int | None:
    """The inode of the loopback socket connected from `client` to `server` (IPv4), from the kernel's table."""
    def hex_of(address: tuple[str, int]) -> str:
        packed = socket.inet_aton(address[0])
        return f"{int.from_bytes(packed, 'little'):08X}:{address[1]:04X}"

    local, remote = hex_of(client), hex_of(server)
    with open(table, encoding="ascii") as rows:
        next(rows)
        for row in rows:
            fields = row.split()
            if fields[1] == local and fields[2] == remote:
                return int(fields[9])
    return None


def holds(pid: int, inode: int) -> bool:
    """Whether process `pid` holds socket `inode` among its open files."""
    wanted = f"socket:[{inode}]"
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == wanted:
                return True
        except OSError:
            continue
    return False


def _raw_answer(status: int) -> bytes:
    """An HTTP answer with no body, for a connection whose request was not (or not wholly) read."""
    return f"HTTP/1.0 {status} {HTTPStatus(status).phrase}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()


def _status(exc: Exception) -> int:
    if isinstance(exc, PermissionError):
        return 403
    if isinstance(exc, RequestTimedOut):
        return 408
    if isinstance(exc, RequestTooLarge):
        return 413
    return 400


class _Notified(http.server.BaseHTTPRequestHandler):
    """One notification per connection (HTTP/1.0), read whole within `timeout` (its request line, headers and body:
    one deadline, not one per read) and at most `MAX_HEADERS` + `MAX_REQUEST` bytes, from the emulator only: the
    peer is checked before a byte is read, so another process holds a thread for the check alone."""

    server: _NotifyServer
    timeout = REQUEST_DEADLINE_S  # the whole request's deadline, and the answer's (sendall's timeout)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the socket's own file, read per recv: the deadline's reader reads instead
        self.rfile = io.BufferedReader(DeadlineReader(self.connection, self.timeout, MAX_HEADERS + MAX_REQUEST))

    def handle(self) -> None:
        try:
            self.server.check_peer(self.client_address)
        except OSError as exc:
            log.warning("notification refused: %s", exc)
            self.refuse_unread(403)
            return
        try:
            super().handle()
        except (RequestTimedOut, RequestTooLarge) as exc:  # in the request line or the headers
            log.warning("notification refused: %s", exc.problems[0].message)
            self.refuse_unread(_status(exc))

    def refuse_unread(self, status: int) -> None:
        """Answer `status` before the request is read (or wholly read), then drop what the client still sends for
        a moment: closing with its bytes unread would reset the connection, and a reset can lose the answer."""
        try:
            self.connection.settimeout(self.timeout)
            self.connection.sendall(_raw_answer(status))
            self.connection.shutdown(socket.SHUT_WR)
            drain = DeadlineReader(self.connection, min(DRAIN_S, self.timeout), MAX_HEADERS + MAX_REQUEST)
            while drain.read(65536):
                pass
        except (ClusterforgeError, OSError):
            pass

    def do_PUT(self) -> None:
        try:
            size = int(self.headers.get("Content-Length") or 0)
            if size <= 0 or size > MAX_REQUEST:
                error = RequestTooLarge if size > MAX_REQUEST else ClusterforgeError
                raise error(Problem(f"a notification is 1 to {MAX_REQUEST} bytes, not {size}"))
            raw = self.rfile.read(size)
            if too_deep(raw):
                raise ClusterforgeError(Problem("notification nested too deep"))
            system = json.loads(raw)
            if not isinstance(system, dict):
                raise ClusterforgeError(Problem("a notification is a system, a JSON object"))
            self.server.accept(system)
        except (ClusterforgeError, ValueError, OSError) as exc:
            message = exc.problems[0].message if isinstance(exc, ClusterforgeError) else str(exc)
            log.warning("notification refused: %s", message)
            self.connection.settimeout(self.timeout)  # a client that does not read its answer is cut off too
            self.send_response(_status(exc))
            self.end_headers()
            return
        self.connection.settimeout(self.timeout)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class _NotifyServer(BoundedThreadingMixIn, http.server.HTTPServer):
    """A thread per connection, at most `max_clients` at once: past that a connection is answered 503 at once and
    closed, with no thread started (lab/bounded_server.py). The emulator notifies one change per request and is
    answered at once (the work is queued), so it holds a slot for moments."""

    def __init__(self, side: BmcSide) -> None:
        self.side = side
        super().__init__(("127.0.0.1", 0), _Notified)

    def busy_answer(self, message: str) -> bytes:
        return _raw_answer(503)

    def check_peer(self, client: tuple[str, int]) -> None:
        pid = self.side.emulator_pid()
        inode = socket_inode(client, self.server_address[:2])  # type: ignore[arg-type]
        if pid is None or inode is None or not holds(pid, inode):
            raise PermissionError(f"peer {client[0]}:{client[1]} is not the lab's BMC emulator")

    def accept(self, system: dict[str, Any]) -> None:
        node, power = str(system.get("name", "")), str(system.get("power_state", ""))
        if not self.side.agent.knows(node):
            raise ClusterforgeError(Problem(f"{node!r} is no node of the lab's power-saved pools"))
        if system.get("pending_power"):  # asked, not applied yet: the server has not changed
            return
        if power not in ("On", "Off"):
            raise ClusterforgeError(Problem(f"power state {power!r} is neither On nor Off"))
        self.side.work.put((node, power))


class BmcSide:
    """The emulator, the notification listener and the worker, for one lab."""

    def __init__(self, agent: Powered, files: BmcFiles) -> None:
        self.agent = agent
        self.files = files
        self.settings = json.loads(files.settings.read_text(encoding="utf-8"))
        self.work: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self.server = _NotifyServer(self)
        self.process: subprocess.Popen[bytes] | None = None
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://{self.settings['address']}:{self.settings['port']}"

    def emulator_pid(self) -> int | None:
        process = self.process
        return process.pid if process is not None and process.poll() is None else None

    def start(self) -> None:
        notify = f"http://127.0.0.1:{self.server.server_address[1]}/notify"
        self.files.emulator_config.write_text(bmc_service.emulator_config(
            self.settings["address"], self.settings["port"], self.settings["systems"], self.files.htpasswd,
            self.files.state, notify), encoding="utf-8")
        for target in (self.server.serve_forever, self._worker, self._supervise):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        log.info("BMC emulator for %d systems at %s; notifications on %s", len(self.settings["systems"]), self.url,
                 notify)

    def stop(self) -> None:
        self.stopping.set()
        self.work.put(None)
        self.server.shutdown()
        self.server.server_close()
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()

    def _worker(self) -> None:
        while (item := self.work.get()) is not None:
            node, power = item
            try:
                self.agent.power_changed(node, power)
            except ClusterforgeError as exc:
                log.warning("%s %s: %s", node, power, exc.problems[0].message)
            except Exception as exc:  # podman hung, say: logged, and the next notification still runs
                log.warning("%s %s failed: %s: %s", node, power, type(exc).__name__, exc)

    def _bindable(self) -> bool:
        with socket.socket() as probe:
            try:
                probe.bind((self.settings["address"], 0))
            except OSError:
                return False
        return True

    def _supervise(self) -> None:
        """Start the emulator once its address exists, and again whenever it exits, until the agent stops."""
        while not self.stopping.is_set():
            if self.emulator_pid() is None:
                if self._bindable():
                    self._launch()
                else:
                    self.stopping.wait(0.5)
                    continue
            self.stopping.wait(RESTART_S)

    def _launch(self) -> None:
        self.files.state.mkdir(exist_ok=True)
        with open(self.files.log, "ab") as out:
            self.process = subprocess.Popen(bmc_service.emulator_command(self.files.emulator_config),
                                            stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        login = yaml.safe_load(self.files.credentials.read_text(encoding="utf-8"))
        try:
            bmc_service.wait_ready(self.url, len(self.settings["systems"]), (login["username"], login["password"]),
                                   alive=lambda: self.emulator_pid() is not None)
            log.info("BMC emulator pid %d answers at %s", self.process.pid, self.url)
        except ClusterforgeError as exc:
            log.warning("%s (log %s)", exc.problems[0].message, self.files.log)
            time.sleep(RESTART_S)
