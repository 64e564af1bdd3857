"""IPMI BMCs on loopback for tests and benchmarks: pyghmi's own BMC server class (the one OpenStack's VirtualBMC
is built on), one fake server behind each, all in one process of their own.

    python tests/ipmi_emulator.py --log FILE [--delay S] [--password PW] gpu-0001 gpu-0002 ...

prints one JSON line, {node: port}, once every BMC listens on 127.0.0.1; each power or boot command it takes is
appended to FILE as `node command`. A power change takes `--delay` seconds to show, as a real server's does.

Three changes to pyghmi's server (1.6), each where a real BMC behaves otherwise:
- it answers a request for an RMCP+ session with cipher suite 17 (SHA-256) with suite 3's algorithms, which
  pyghmi's own client then failed to read: it now refuses suite 17, as a BMC that has only suite 3 does, and the
  client asks again for 3 (`_suite_3_only`). `--answers-like-virtualbmc` leaves pyghmi's answer as it is, as
  OpenStack's VirtualBMC (3.3, on pyghmi 1.6) gives it: clusterforge's client follows the algorithms the answer
  names (clusterforge/bmc/ipmi.py);
- a datagram from a client whose session just closed (a retransmission on a loaded machine, or the next login from
  the same port) is handed to the closed session, which has no handler for it and ends the whole server: it now
  goes to the server's own handler of sessionless requests, as a new login would (`_late_datagrams_go_to_the_bmc`);
- any other error while answering one datagram is that datagram's, said on stderr, and the server goes on
  (`serve`), as a BMC drops a packet it cannot read.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE, Popen

USER, PASSWORD = "admin", "calvin"
NO_MATCHING_AUTHENTICATION = 0x11  # RMCP+ status code (IPMI 2.0, table 13-15)


def _suite_3_only() -> None:
    """pyghmi's server always answers with cipher suite 3 (HMAC-SHA1); refuse any other authentication algorithm
    asked for, so a client that asked for SHA-256 falls back to SHA-1 instead of misreading the answer."""
    from pyghmi.ipmi.private import serversession

    original = serversession.ServerSession.create_open_session_response

    def answer(self, request):  # type: ignore[no-untyped-def]
        response = original(self, request)
        if request[12] != 1:  # the authentication payload's algorithm: 1 is RAKP-HMAC-SHA1
            response[1] = NO_MATCHING_AUTHENTICATION
        return response

    serversession.ServerSession.create_open_session_response = answer


def _late_datagrams_go_to_the_bmc() -> None:
    from pyghmi.ipmi.private import serversession

    def to_the_bmc(self, data, sockaddr):  # type: ignore[no-untyped-def]
        return self.bmc.sessionless_data(data, sockaddr)

    serversession.ServerSession.sessionless_data = to_the_bmc


def serve() -> None:
    """pyghmi's loop, which answers every server's socket, kept going past one datagram's error."""
    from pyghmi.ipmi.private import session

    while True:
        try:
            session.Session.wait_for_rsp(30)
        except Exception as exc:  # one datagram's fault: the others, and the next, are answered
            print(f"ipmi emulator: dropped a datagram ({type(exc).__name__}: {exc})", file=sys.stderr, flush=True)


def _server(node: str, port: int, password: str, delay: float, log: Path, lock: threading.Lock):  # type: ignore[no-untyped-def]
    from pyghmi.ipmi import bmc

    class FakeServer(bmc.Bmc):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__({USER: password}, port=port, address="127.0.0.1")
            self.power, self.changes_at, self.next_power, self.boot = "off", 0.0, "off", "default"

        def _said(self, what: str) -> None:
            with lock, log.open("a") as out:
                out.write(f"{node} {what}\n")

        def _change(self, to: str) -> None:
            self.next_power, self.changes_at = to, time.monotonic() + delay

        def get_power_state(self) -> str:
            if time.monotonic() >= self.changes_at:
                self.power = self.next_power
            return self.power

        def power_on(self) -> None:
            self._said("on")
            self._change("on")

        def power_off(self) -> None:
            self._said("off")
            self._change("off")

        def power_cycle(self) -> None:
            self._said("cycle")
            self.power = "off"
            self._change("on")

        def get_boot_device(self) -> str:
            return self.boot

        def set_boot_device(self, device: str) -> None:
            self._said(f"boot {device}")
            self.boot = device

    return FakeServer()


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", nargs="+")
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--password", default=PASSWORD)
    parser.add_argument("--answers-like-virtualbmc", action="store_true")
    args = parser.parse_args(argv)
    if not args.answers_like_virtualbmc:
        _suite_3_only()
    _late_datagrams_go_to_the_bmc()
    lock = threading.Lock()
    ports = {node: _free_udp_port() for node in args.nodes}
    servers = [_server(node, port, args.password, args.delay, args.log, lock) for node, port in ports.items()]
    print(json.dumps(ports), flush=True)
    assert servers
    serve()
    return 0


@dataclass(frozen=True)
class IpmiBmcs:
    ports: dict[str, int]
    log: Path
    pid: int  # the emulator's process, which a test stops (SIGSTOP) to play a slow BMC. No default: a pid of 0
    # would make os.kill signal the caller's whole process group.

    def commands(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def document(self, path: Path, **extra: object) -> Path:
        """A BMC document naming every node's BMC, protocol ipmi."""
        import yaml

        bmcs = {node: {"url": f"ipmi://127.0.0.1:{port}", "protocol": "ipmi"} for node, port in self.ports.items()}
        path.write_text(yaml.safe_dump({"bmcs": bmcs, **extra}))
        return path


@contextmanager
def ipmi_bmcs(folder: Path, nodes: list[str], delay: float = 0.0, password: str = PASSWORD,
              like_virtualbmc: bool = False) -> Iterator[IpmiBmcs]:
    """The emulator started for `nodes`, its ports read, stopped after."""
    log = folder / "ipmi-commands.log"
    process = Popen([sys.executable, __file__, "--log", str(log), "--delay", str(delay), "--password", password,
                     *(["--answers-like-virtualbmc"] if like_virtualbmc else []), *nodes], stdout=PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the IPMI emulator did not start (exit {process.wait(10)})")
        yield IpmiBmcs(json.loads(line), log, process.pid)
    finally:
        process.terminate()
        process.wait(10)


if __name__ == "__main__":
    sys.exit(main())
