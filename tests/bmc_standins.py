"""Stand-in BMCs for the hostile cases: a small Redfish service on loopback (a service root, one system, its reset
action and boot override, enough for sushy), each with one way of lying, and a log of every request it got (method,
path, the user of the login that came with it), so a test can show that nothing reached a BMC that should have
heard nothing.

    honest       answers as a BMC does
    reset-elsewhere   the system's Reset action `target` is another BMC's URL
    member-elsewhere  the Systems collection lists a system on another host
    link-elsewhere    the service root's `Systems` link is another host's
    endless      every answer's body never ends
    drip         every answer comes one byte every `drip_s` seconds, from its status line on
    continuous   a one-time boot override is kept, and read back, as Continuous
    closes       accepts and closes every connection at once, counting them
"""

from __future__ import annotations

import base64
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

SYSTEM = "/redfish/v1/Systems/1"
RESET = f"{SYSTEM}/Actions/ComputerSystem.Reset"


@dataclass
class StandIn:
    url: str
    behaviour: str
    elsewhere: str = ""  # the other BMC's URL the lying ones point to
    drip_s: float = 3.0
    power: str = "On"
    boot: dict[str, str] = field(default_factory=lambda: {"BootSourceOverrideEnabled": "Disabled",
                                                          "BootSourceOverrideTarget": "None"})
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # (method, path, the login's user or "")
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def document(self, path: str) -> dict[str, Any] | None:
        away = self.elsewhere
        if path.rstrip("/") == "/redfish/v1":
            systems = f"{away}/redfish/v1/Systems" if self.behaviour == "link-elsewhere" else "/redfish/v1/Systems"
            return {"@odata.id": "/redfish/v1/", "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot", "Id": "RootService",
                    "Name": "Root Service", "RedfishVersion": "1.5.0", "UUID": "00000000-0000-0000-0000-000000000001",
                    "Systems": {"@odata.id": systems}}
        if path.rstrip("/") == "/redfish/v1/Systems":
            member = f"{away}{SYSTEM}" if self.behaviour == "member-elsewhere" else SYSTEM
            return {"@odata.id": "/redfish/v1/Systems",
                    "@odata.type": "#ComputerSystemCollection.ComputerSystemCollection",
                    "Name": "Computer System Collection", "Members@odata.count": 1, "Members": [{"@odata.id": member}]}
        if path.rstrip("/") == SYSTEM:
            target = f"{away}{RESET}" if self.behaviour == "reset-elsewhere" else RESET
            return {"@odata.id": SYSTEM, "@odata.type": "#ComputerSystem.v1_10_0.ComputerSystem", "Id": "1",
                    "Name": "stand-in", "PowerState": self.power,
                    "Boot": {**self.boot, "BootSourceOverrideTarget@Redfish.AllowableValues": ["None", "Pxe", "Hdd"]},
                    "Actions": {"#ComputerSystem.Reset": {
                        "target": target,
                        "ResetType@Redfish.AllowableValues": ["On", "ForceOff", "ForceRestart", "PowerCycle"]}}}
        return None

    def act(self, method: str, path: str, body: dict[str, Any]) -> int:
        if method == "POST" and path == RESET:
            kind = body.get("ResetType", "")
            self.power = "Off" if kind == "ForceOff" else "On"
            return 204
        if method == "PATCH" and path == SYSTEM:
            boot = dict(body.get("Boot") or {})
            if self.behaviour == "continuous" and boot.get("BootSourceOverrideEnabled") == "Once":
                boot["BootSourceOverrideEnabled"] = "Continuous"
            self.boot.update({k: str(v) for k, v in boot.items() if k in self.boot})
            return 204
        return 405


def _user(header: str) -> str:
    if not header.startswith("Basic "):
        return ""
    return base64.b64decode(header[6:]).decode().split(":", 1)[0]


class _Handler(http.server.BaseHTTPRequestHandler):
    standin: StandIn
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        bmc = self.standin
        with bmc.lock:
            bmc.requests.append((self.command, self.path, _user(self.headers.get("Authorization", ""))))
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        if bmc.behaviour == "endless":
            self._endless()
            return
        if self.command == "GET":
            document = bmc.document(self.path)
            code, payload = (200, json.dumps(document).encode()) if document else (404, b"{}")
        else:
            code, payload = bmc.act(self.command, self.path, body), b""
        head = (f"HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
                "Connection: close\r\n\r\n").encode()
        if bmc.behaviour == "drip":
            self._drip(head + payload)
        else:
            self.wfile.write(head + payload)
        self.close_connection = True

    def _endless(self) -> None:
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
        self.wfile.write(b'{"Id": "')
        chunk = b"x" * 65536
        try:
            while True:
                self.wfile.write(chunk)
        except OSError:
            self.close_connection = True  # the client gave up: what a bounded client does

    def _drip(self, answer: bytes) -> None:
        try:
            for byte in answer:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(self.standin.drip_s)
        except OSError:
            self.close_connection = True

    do_GET = do_POST = do_PATCH = _serve

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up on a hostile BMC closes its end: expected


@contextmanager
def standin(behaviour: str = "honest", elsewhere: str = "", drip_s: float = 3.0) -> Iterator[StandIn]:
    """A stand-in BMC on loopback with `behaviour` (the module's table); yields it, its URL in `.url`."""
    if behaviour == "closes":
        yield from _closing()
        return
    bmc = StandIn("", behaviour, elsewhere, drip_s)
    server = _Server(("127.0.0.1", 0), type("Handler", (_Handler,), {"standin": bmc}))
    bmc.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield bmc
    finally:
        server.shutdown()
        server.server_close()


def _closing() -> Iterator[StandIn]:
    """A listener that accepts and at once closes each connection, counting them: a client's hidden retries show
    as more than one."""
    listener = socket.create_server(("127.0.0.1", 0))
    bmc = StandIn(f"http://127.0.0.1:{listener.getsockname()[1]}", "closes")
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with bmc.lock:
                bmc.connections += 1
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield bmc
    finally:
        stop.set()
        thread.join(2)
        listener.close()
