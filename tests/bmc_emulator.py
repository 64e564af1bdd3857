"""OpenStack's sushy-tools Redfish emulator (fake driver) on loopback, for tests and benchmarks: `systems` fake
servers, all Off, behind basic auth, named gpu-0001 ...; and stand-in BMCs that fail the ways real ones do."""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

USER, PASSWORD = "admin", "calvin"


@dataclass(frozen=True)
class Emulator:
    url: str
    ids: dict[str, str]  # node -> system id

    def system(self, node: str) -> dict:
        answer = requests.get(f"{self.url}/redfish/v1/Systems/{self.ids[node]}", auth=(USER, PASSWORD), timeout=10)
        answer.raise_for_status()
        return answer.json()  # type: ignore[no-any-return]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def emulator(folder: Path, systems: int = 64) -> Iterator[Emulator]:
    import bcrypt

    ids = {f"gpu-{i:04d}": str(uuid.UUID(int=i)) for i in range(1, systems + 1)}
    fake = [{"uuid": ident, "name": node, "power_state": "Off"} for node, ident in ids.items()]
    (folder / "htpasswd").write_text(f"{USER}:{bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()}\n")
    port = free_port()
    (folder / "emulator.py").write_text(
        f"SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'\nSUSHY_EMULATOR_LISTEN_PORT = {port}\n"
        f"SUSHY_EMULATOR_FAKE_DRIVER = True\nSUSHY_EMULATOR_FAKE_SYSTEMS = {fake!r}\n"
        f"SUSHY_EMULATOR_AUTH_FILE = {str(folder / 'htpasswd')!r}\n"
        f"SUSHY_EMULATOR_STATE_DIR = {str(folder / 'state')!r}\n")  # its own: the default is shared by every run
    log = (folder / "emulator.log").open("w")
    process = subprocess.Popen([str(Path(sys.executable).with_name("sushy-emulator")), "--fake", "--config",
                                str(folder / "emulator.py")], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                # The Systems list, not the service root: the emulator builds its fake driver on first use, and
                # concurrent first requests each build one, the last re-inserting a system (Off, nothing pending)
                # over a reset another request already took. One request builds it here, alone.
                listed = requests.get(f"{url}/redfish/v1/Systems", auth=(USER, PASSWORD), timeout=5)
                if listed.ok and listed.json().get("Members@odata.count") == systems:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sushy-emulator did not start: {(folder / 'emulator.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield Emulator(url, ids)
    finally:
        process.terminate()
        process.wait(10)
        log.close()


class _Answers(http.server.BaseHTTPRequestHandler):
    """A BMC that answers every request with `code` (after `delay_s`, longer than any client waits: no answer)."""

    code = 500
    delay_s = 0.0

    def _answer(self) -> None:
        if self.delay_s:
            time.sleep(self.delay_s)
        self.send_response(self.code)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error": {"code": "Base.1.0.GeneralError", "message": "stand-in"}}')

    do_GET = do_POST = do_PATCH = _answer

    def log_message(self, *args: object) -> None:
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up on a silent BMC closes its end: expected, not worth a traceback


@contextmanager
def broken_bmc(code: int = 500, delay_s: float = 0.0) -> Iterator[str]:
    """A stand-in BMC on loopback that answers `code`, or (delay_s) not in time; yields its URL."""
    handler = type("Handler", (_Answers,), {"code": code, "delay_s": delay_s})
    server = _QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
