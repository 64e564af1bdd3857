"""The wire under the Redfish client: every request stays on its node's own BMC, and every answer is bounded in
bytes and in time.

A BMC's answer is untrusted input. sushy, like every Redfish client, follows the links a BMC's JSON gives (a
system's `@odata.id`, a reset action's `target`, an ActionInfo) and sends its login with each; it reads an answer
whole; its timeouts are per socket read, and it retries a connection error three times on its own. Left so, one
compromised BMC could send the fleet's login and a `ForceOff` to another server by naming that server's BMC as its
reset target, end a whole fleet's run with an answer that never ends, or hold a worker for as long as it drips a
byte before each read timeout. This module is the requests transport sushy is given (`connector`), and it makes
those impossible rather than unlikely:

- **Origin.** A request whose scheme, host and port are not the node's document URL's is refused before a byte is
  sent (no login, no reset reaches another host), and fails that node: `BmcFailure`, final.
- **Size.** An answer is read in chunks, at most `MAX_ANSWER_BYTES`; past that the node fails ("answer over
  ..."). Compressed answers are refused (`Accept-Encoding: identity` is asked for), so the bound is on what is
  held, not on what a decoder makes of it.
- **Time.** One `Exchange` is one node's ask (the service root, its system, the reset: a handful of requests) or
  one later look at it, and `timeout_s` bounds it whole, however slowly the BMC sends: a watchdog shuts the
  exchange's sockets at its deadline, which ends any read in progress at once.
- **Retries.** None here: a transport error reaches sushy as an exception it does not retry, so the fleet's
  `--attempts` is the only retry and its pauses the only waits.
- **Nothing else decides.** No proxy, `.netrc` or other environment setting changes where a request goes or which
  login it carries (`trust_env` off).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from clusterforge.bmc.interface import BmcFailure

MAX_ANSWER_BYTES = 1024 * 1024  # a ComputerSystem is 5-20 KB and a Systems collection of 1,000 members ~60 KB
MAX_REQUESTS = 16  # one ask takes 3-6 (root, collection, system, boot patch and re-read, reset)
CHUNK = 64 * 1024
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL, the port filled in: what two URLs must share to reach the same BMC."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme, 0)


def _shown(place: tuple[str, str, int]) -> str:
    scheme, host, port = place
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"[:120]


class Exchange:
    """One node's ask of its BMC, or one look: its deadline, its budget of requests and the sockets it opened."""

    def __init__(self, home: tuple[str, str, int], timeout_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.home, self.timeout_s, self.clock = home, timeout_s, clock
        self.deadline = clock() + timeout_s
        self.requests = 0
        self.received = 0  # bytes of answers' bodies
        self.answered = False  # some of an answer came (a status line, headers, a body): it is late, not silent
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.deadline - self.clock()

    def over(self) -> bool:
        """The deadline passed, whether or not the watchdog's thread has shut the sockets yet: a socket's own
        timeout is what was left of it, and on a loaded machine it can end a read before that thread runs."""
        return self.expired or self.remaining() <= 0

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            if self.expired:
                _shut(sock)
            self._sockets.append(sock)

    def expire(self) -> None:
        """The deadline passed: shut every socket, which ends a blocked connect, handshake or read at once."""
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def late(self) -> BmcFailure:
        """Why the node failed when the deadline ended its exchange: silence may pass, a half answer does not."""
        if self.received or self.answered:
            return BmcFailure(f"no whole answer within {self.timeout_s:g} s (part of it came)", final=True)
        return BmcFailure(f"no answer within {self.timeout_s:g} s")


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing to end
        sock.shutdown(socket.SHUT_RDWR)


class _Watchdog:
    """One thread for every exchange in flight: at each deadline, that exchange's sockets are shut. (A timer thread
    per request would start 60,000 threads to power 12,500 nodes.)"""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Exchange]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def guard(self, exchange: Exchange) -> None:
        with self._wake:
            heapq.heappush(self._due, (exchange.deadline, next(self._order), exchange))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="clusterforge-bmc-deadlines", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        with self._wake:
            while True:
                while not self._due:
                    self._wake.wait()
                deadline, _, exchange = self._due[0]
                wait = deadline - exchange.clock()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                heapq.heappop(self._due)
                exchange.expire()


WATCHDOG = _Watchdog()
_CURRENT = threading.local()  # the exchange of the request this thread is sending, for the connection classes


def _watched(connection_class: type[Any]) -> type[Any]:
    """`connection_class` whose sockets are handed to the exchange in flight on this thread as they are made."""

    class Watched(connection_class):  # type: ignore[misc]
        def _new_conn(self) -> socket.socket:
            sock: socket.socket = super()._new_conn()
            exchange = getattr(_CURRENT, "exchange", None)
            if exchange is not None:
                exchange.watch(sock)
            return sock

    Watched.__name__ = f"Watched{connection_class.__name__}"
    return Watched


_CAUSES = (  # (words in the error, what the node's line says, final: asking again cannot help)
    ("wrong version number", "the BMC does not speak TLS there (is its URL http://?)", True),
    ("record layer failure", "the BMC does not speak TLS there (is its URL http://?)", True),
    ("certificate verify failed", "its certificate failed verification", True),
    ("badstatusline", "its answer is not HTTP (is its URL https://?)", True),
    ("connection refused", "connection refused", False),
    ("name or service not known", "its name does not resolve", False),
    ("temporary failure in name resolution", "its name does not resolve", False),
    ("network is unreachable", "network unreachable", False),
    ("no route to host", "no route to host", False),
    ("timed out", "timed out", False),
    ("connection reset", "connection reset", False),
    ("remote end closed", "it closed the connection", False),
)


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and len(found) < 8:
        found.append(link)
        link = link.__cause__ or link.__context__
    return found


def _partly_answered(exc: BaseException) -> bool:
    """The socket was shut while part of a status line or of a body had come (a drip), not in silence."""
    import http.client

    return any(isinstance(e, http.client.IncompleteRead) or (isinstance(e, http.client.BadStatusLine)
                                                             and not isinstance(e, http.client.RemoteDisconnected))
               for e in _chain(exc))


def _failure(exc: BaseException) -> BmcFailure:
    """A transport error as a few words, never a library's whole text cut mid-word."""
    text = " ".join(f"{type(e).__name__} {e}".lower() for e in _chain(exc))
    for words, said, final in _CAUSES:
        if words in text:
            return BmcFailure(said, final=final)
    return BmcFailure(f"transport error ({type(exc).__name__})")


def adapter_class() -> type[Any]:
    """The requests adapter, made on first use: requests is imported only by the programs that talk to BMCs."""
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = _make_adapter()
    return _ADAPTER


_ADAPTER: type[Any] | None = None


def _make_adapter() -> type[Any]:
    from requests.adapters import HTTPAdapter
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Pool(HTTPConnectionPool):
        ConnectionCls = _watched(HTTPConnectionPool.ConnectionCls)

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = _watched(HTTPSConnectionPool.ConnectionCls)

    class BoundedAdapter(HTTPAdapter):
        """requests' adapter held to one exchange at a time: `exchange` is set before each ask or look."""

        exchange: Exchange | None = None

        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": SecurePool}

        def send(self, request: Any, stream: bool = False, timeout: Any = None, verify: Any = True,
                 cert: Any = None, proxies: Any = None) -> Any:
            exchange = self.exchange
            if exchange is None:
                raise BmcFailure("internal: a BMC request outside an exchange", final=True)
            there = origin(str(request.url))
            if there != exchange.home:
                raise BmcFailure(f"the BMC pointed to {_shown(there)}, not its own address: nothing was sent there",
                                 final=True)
            exchange.requests += 1
            if exchange.requests > MAX_REQUESTS:
                raise BmcFailure(f"the BMC led to over {MAX_REQUESTS} requests for one action", final=True)
            left = exchange.remaining()  # read first: not over() after it, so what is left is above 0
            if exchange.over():
                raise exchange.late()
            request.headers["Accept-Encoding"] = "identity"
            _CURRENT.exchange = exchange
            try:
                response = super().send(request, stream=True, timeout=(left, left), verify=verify, cert=cert,
                                        proxies={})
                exchange.answered = True
                response._content = _read(response, exchange)  # requests' own cache of the body
            except BmcFailure:
                raise
            except Exception as exc:  # whatever the answer did, it is this node's failure alone
                if exchange.over():  # the deadline ended it, whichever of the two timers fired first
                    exchange.answered = exchange.answered or _partly_answered(exc)
                    raise exchange.late() from None
                raise _failure(exc) from None
            finally:
                _CURRENT.exchange = None
            return response

    return BoundedAdapter


def _read(response: Any, exchange: Exchange) -> bytes:
    """The answer's body, at most MAX_ANSWER_BYTES, read as it comes (never whole first), uncompressed only."""
    try:
        encoding = str(response.headers.get("Content-Encoding", "identity")).strip().lower()
        if encoding not in ("", "identity"):
            raise BmcFailure(f"a compressed answer ({encoding[:20]}) where identity was asked for", final=True)
        declared = str(response.headers.get("Content-Length", "")).strip()
        if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            raise BmcFailure(f"answer over {MAX_ANSWER_BYTES} bytes ({declared} announced)", final=True)
        body = bytearray()
        while True:
            chunk = response.raw.read(CHUNK, decode_content=False)
            if not chunk:
                break
            body += chunk
            exchange.received += len(chunk)
            if len(body) > MAX_ANSWER_BYTES:
                raise BmcFailure(f"answer over {MAX_ANSWER_BYTES} bytes", final=True)
        if exchange.expired:  # the watchdog shut the socket: what came is not the whole answer
            raise exchange.late()
        return bytes(body)
    finally:
        response.close()


def connector(target_url: str, verify: bool | str, timeout_s: float) -> tuple[Any, Any]:
    """A sushy connector for one node's BMC over the bounded adapter, and that adapter (`.exchange` is set per ask
    or look by the caller)."""
    from sushy import connector as sushy_connector

    connection = sushy_connector.Connector(target_url, verify=verify, server_side_retries=0,
                                           server_side_retries_delay=0)
    adapter = adapter_class()(max_retries=0)
    session = connection._session  # sushy's one requests session: its transport is ours
    session.trust_env = False
    session.max_redirects = 3
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return connection, adapter


def begin_exchange(adapter: Any, target_url: str, timeout_s: float) -> Exchange:
    """A new exchange on `adapter`, watched: the deadline starts now."""
    exchange = Exchange(origin(target_url), timeout_s)
    adapter.exchange = exchange
    WATCHDOG.guard(exchange)
    return exchange
