"""What one client may cost the lab's power agent, for both of its listeners: the `lab` provider's Unix socket
(lab/power_agent.py) and the BMC emulator's notifications (lab/bmc_power.py).

`DeadlineReader`: a connection's bytes, all of them within one deadline from the first read (not one timeout per
recv, which a client sending a byte just within each would stretch without end) and at most a size cap.
`BoundedThreadingMixIn`: one thread per connection, at most `max_clients` at once; past that a connection is
answered `busy_answer()` at once from the accepting thread and closed, with no thread started and nothing read.

Refusing, not queueing: a queue (not accepting, or blocking until a thread ends) would leave the clients behind the
full slots waiting on the slowest of them, up to its deadline each, and block the agent's shutdown while it waits;
an answer at once lets the client fail fast and try again.
"""

from __future__ import annotations

import io
import logging
import socket
import socketserver
import threading
import time
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem

MAX_CLIENTS = 64  # connections handled at once; each costs a thread
log = logging.getLogger("clusterforge.lab.power_agent")


class RequestTimedOut(ClusterforgeError):
    """No whole request within the deadline."""


class RequestTooLarge(ClusterforgeError):
    """More bytes than the cap."""


class DeadlineReader(io.RawIOBase):
    """`connection`'s bytes, whole within `seconds` of this reader's making however slowly they come, and at most
    `limit` of them: past either, a read raises `RequestTimedOut` or `RequestTooLarge`. Wrap it in an
    io.BufferedReader to read lines. The connection's timeout is left at what remained of the deadline: set it
    again before answering. A read may go past `limit` by what it asked for (a larger read takes more of a client's
    bytes before it is answered, and a client's bytes left unread reset its connection on close)."""

    def __init__(self, connection: socket.socket, seconds: float, limit: int) -> None:
        super().__init__()
        self.connection = connection
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.limit = limit
        self.size = 0

    def readable(self) -> bool:
        return True

    def timed_out(self) -> RequestTimedOut:
        return RequestTimedOut(Problem(f"timed out: no whole request within {self.seconds:g} s"))

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.timed_out()
        self.connection.settimeout(left)
        try:
            got = self.connection.recv_into(buffer)
        except TimeoutError:
            raise self.timed_out() from None
        self.size += got
        if self.size > self.limit:
            raise RequestTooLarge(Problem("request too large"))
        return got


class BoundedThreadingMixIn(socketserver.ThreadingMixIn):
    """A thread per connection, at most `max_clients` at once (see the module's docstring)."""

    daemon_threads = True
    max_clients = MAX_CLIENTS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.clients = 0
        self.clients_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def busy_answer(self, message: str) -> bytes:
        """What a connection past the cap is sent before it is closed."""
        raise NotImplementedError

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.clients_lock:
            busy = self.clients >= self.max_clients
            if not busy:
                self.clients += 1
        if busy:
            self.refuse_busy(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: its slot is free again
            self.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.release()

    def release(self) -> None:
        with self.clients_lock:
            self.clients -= 1

    def refuse_busy(self, request: socket.socket) -> None:
        message = f"busy: {self.max_clients} clients at once, try again"
        log.warning("refused: %s", message)
        try:
            request.setblocking(False)  # a new connection's send buffer takes a short answer: never waits
            request.send(self.busy_answer(message))
        except OSError as exc:
            log.warning("could not answer: %s", exc)
        self.shutdown_request(request)  # type: ignore[attr-defined]  # socketserver.BaseServer's, beside it
