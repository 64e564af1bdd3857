"""What a client may cost the power agent's Redfish side (lab/bmc_power.py's notification listener), bounded as the
`lab` provider's socket is (lab/bounded_server.py): one deadline for the whole request, a size cap, a cap on
connections handled at once, and JSON depth checked before json.loads. No emulator runs here: the listener takes
this test process for the emulator, so the test's own sockets pass its peer check (the real one)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from clusterforge.lab import bmc_power
from clusterforge.lab.bmc_power import MAX_HEADERS, MAX_REQUEST, _NotifyServer


class Known:
    def knows(self, node: str) -> bool:
        return node == "burst-0002"

    def power_changed(self, node: str, power: str) -> None:  # the worker's; no worker runs here
        raise AssertionError("not here")


class Side:
    """What the listener asks of BmcSide, with this process as the emulator."""

    def __init__(self, emulator: int | None) -> None:
        self.agent = Known()
        self.work: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self.emulator = emulator

    def emulator_pid(self) -> int | None:
        return self.emulator


@pytest.fixture
def listener() -> Iterator[tuple[Side, tuple[str, int]]]:
    side = Side(os.getpid())
    server = _NotifyServer(side)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield side, server.server_address[:2]  # type: ignore[misc]
    server.shutdown()
    server.server_close()


def put(body: bytes, length: int | None = None, extra: bytes = b"") -> bytes:
    size = len(body) if length is None else length
    return (b"PUT /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra
            + f"Content-Length: {size}\r\n\r\n".encode() + body)


def exchange(address: tuple[str, int], data: bytes) -> int:
    """Send `data`, end our side, and read the answer's status."""
    with socket.create_connection(address, timeout=10) as conn:
        with contextlib.suppress(OSError):  # answered before all of it was read: the answer still comes
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def notification(node: str = "burst-0002", power: str = "On") -> bytes:
    return json.dumps({"name": node, "power_state": power}).encode()


def handlers() -> int:
    """The listener's threads for connections (socketserver names them by their target)."""
    return sum("process_request_thread" in t.name for t in threading.enumerate())


def settle(predicate: Any, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_notification_from_the_emulator_is_queued_and_answered_204(listener) -> None:
    side, address = listener
    assert exchange(address, put(notification())) == 204
    assert side.work.get(timeout=5) == ("burst-0002", "On")
    pending = json.dumps({"name": "burst-0002", "power_state": "Off", "pending_power": {"x": 1}}).encode()
    assert exchange(address, put(pending)) == 204 and side.work.empty()
    assert exchange(address, put(notification("burst-0009"))) == 400


def test_another_process_is_refused_403_before_its_request_is_read(listener) -> None:
    side, address = listener
    side.emulator = None  # no emulator runs: this process is not it
    assert exchange(address, put(notification())) == 403
    began = time.monotonic()
    with socket.create_connection(address, timeout=10) as conn:  # sends nothing, yet is answered
        assert conn.recv(65536).startswith(b"HTTP/1.0 403 ")
    assert time.monotonic() - began < 2
    assert side.work.empty()


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_client_dripping_its_notification_is_cut_off_at_the_whole_request_deadline(listener, monkeypatch,
                                                                                    where) -> None:
    monkeypatch.setattr(bmc_power._Notified, "timeout", 1.0)
    side, address = listener
    began = time.monotonic()
    with socket.create_connection(address) as conn:
        conn.settimeout(0.3)  # a byte every 0.3 s: each read of the listener's gets one well within its 1 s
        conn.sendall(b"PUT /notify HTTP/1.1\r\nX-Slow: " if where == "headers" else put(b"", 100))
        answer = b""
        while not answer and time.monotonic() - began < 8:
            try:
                answer = conn.recv(65536)
            except TimeoutError:
                with contextlib.suppress(OSError):  # cut off between our read and this write: the answer waits
                    conn.sendall(b"a" if where == "headers" else b" ")
    took = time.monotonic() - began
    assert answer.startswith(b"HTTP/1.0 408 "), answer
    assert took < 3, f"cut off after {took:.1f} s"
    assert exchange(address, put(notification())) == 204  # the listener still answers
    assert side.work.get(timeout=5) == ("burst-0002", "On")


def test_past_max_clients_a_connection_is_refused_503_at_once_without_a_thread(listener, monkeypatch) -> None:
    monkeypatch.setattr(_NotifyServer, "max_clients", 4)
    side, address = listener
    before = threading.active_count()
    idle = [socket.create_connection(address) for _ in range(4)]  # each sends nothing: a handler waits on it
    try:
        settle(lambda: handlers() >= 4)
        assert handlers() == 4
        for _ in range(20):
            with socket.create_connection(address, timeout=5) as conn:
                answer = conn.recv(65536)
                assert answer.startswith(b"HTTP/1.0 503 "), answer
        assert handlers() == 4 and threading.active_count() <= before + 4
    finally:
        for conn in idle:
            conn.close()
    settle(lambda: handlers() == 0)
    assert exchange(address, put(notification())) == 204  # their slots are free again
    assert side.work.get(timeout=5) == ("burst-0002", "On")


def test_an_oversize_notification_is_refused_413(listener) -> None:
    side, address = listener
    assert exchange(address, put(b"{}", MAX_REQUEST + 1)) == 413  # by what it declares, before its body is read
    padding = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(90))
    assert len(padding) > MAX_HEADERS + MAX_REQUEST  # in 90 headers: http.client alone would take up to 100
    assert exchange(address, put(notification(), extra=padding)) == 413  # headers past the cap, never parsed whole
    assert side.work.empty()
    assert exchange(address, put(notification())) == 204


def test_a_deeply_nested_notification_is_refused_before_json_loads_recurses(listener, caplog) -> None:
    side, address = listener
    assert exchange(address, put(b"[" * 60_000)) == 400
    assert "notification nested too deep" in caplog.text
    assert side.work.empty()
