"""OpenStack's sushy-tools Redfish emulator (fake driver) on loopback, for tests and benchmarks: `systems` fake
servers, all Off, behind basic auth, named gpu-0001 ...; and stand-in BMCs that fail the ways real ones do."""

from __future__ import annotations

import http.server
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests

from clusterforge.core.errors import ClusterforgeError
from clusterforge.lab import bmc_service
from clusterforge.lab.bmc_service import free_port

USER, PASSWORD = "admin", "calvin"


@dataclass(frozen=True)
class Emulator:
    url: str
    ids: dict[str, str]  # node -> system id

    def system(self, node: str) -> dict:
        answer = requests.get(f"{self.url}/redfish/v1/Systems/{self.ids[node]}", auth=(USER, PASSWORD), timeout=10)
        answer.raise_for_status()
        return answer.json()  # type: ignore[no-any-return]


def mac(server: int, nic: int) -> str:
    """The emulator's NIC `nic` of server `server` (1-based): 52:54:00 is QEMU's prefix, then the two numbers."""
    return f"52:54:00:{server >> 8 & 255:02x}:{server & 255:02x}:{nic:02x}"


@contextmanager
def emulator(folder: Path, systems: int = 64) -> Iterator[Emulator]:
    """The emulator configured and waited for as the lab's BMC service does it (clusterforge/lab/bmc_service.py),
    on loopback, with no notification URL."""
    import bcrypt

    ids = {f"gpu-{i:04d}": str(uuid.UUID(int=i)) for i in range(1, systems + 1)}
    macs = {node: [mac(i, 1), mac(i, 2)] for i, node in enumerate(ids, start=1)}
    (folder / "htpasswd").write_text(f"{USER}:{bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()}\n")
    port = free_port()
    config = folder / "emulator.py"
    config.write_text(bmc_service.emulator_config("127.0.0.1", port, ids, folder / "htpasswd", folder / "state",
                                                  nics=macs))
    log = (folder / "emulator.log").open("w")
    process = subprocess.Popen(bmc_service.emulator_command(config), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            bmc_service.wait_ready(url, systems, (USER, PASSWORD), alive=lambda: process.poll() is None, timeout=30)
        except ClusterforgeError:
            said = (folder / "emulator.log").read_text()[-2000:]
            raise RuntimeError(f"sushy-emulator did not start: {said}") from None
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
