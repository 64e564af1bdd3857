"""One action on many nodes' BMCs: bounded concurrency, retries with backoff, an answer per node.

At 12,500 nodes the work is the BMCs' (hundreds of ms to seconds a request, minutes to power a server on), not this
process's, so requests run in threads, `concurrency` at once, and no thread waits for a server to change state: the
resets are sent, then the changing nodes are read in rounds (64 by default: enough to keep 12,500 BMCs busy, few
enough for one management network and one controller). Each node is asked in the protocol its BMC speaks
(`clusterforge.bmc.protocols`), so one run can hold several. A node whose BMC does not answer or answers a server
error is asked again after a growing pause (1, 2, 4 s ...), `attempts` times in all; a failure its protocol calls
final (a refused login, an unknown system, an answer that breaks the rules) is not asked again. One node failing
never stops the others: every node gets an `Outcome` or a reason, whatever its BMC did.

How long a run can take, with every BMC silent or dripping: one ask is at most `timeout_s` (the transport's
deadline; IPMI's is checked between its datagrams), so a node's asking ends within `attempts * timeout_s` plus the
pauses (`2**(attempts-1) - 1` s); `ceil(nodes / concurrency)` such waves; then at most `settle_s` plus one round of
looks (`timeout_s` each) for the nodes still changing. `bound_s` is that figure, which the power-save programs state
and hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from clusterforge.bmc import protocols
from clusterforge.bmc.credentials import Credentials, Logins
from clusterforge.bmc.interface import BmcFailure, NodeBmc, Outcome, Pending

DEFAULT_CONCURRENCY = 64
DEFAULT_ATTEMPTS = 3
POLL_S = 2.0  # between rounds of reading the nodes still changing (the emulator applies a change in 1-11 s)
T = TypeVar("T")


@dataclass
class FleetResult:
    done: dict[str, Outcome] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # node -> reason
    seconds: float = 0.0  # wall time of the whole run

    @property
    def ok(self) -> bool:
        return not self.failed


def _retried(call: Callable[[], T], attempts: int, sleep: Callable[[float], None]) -> T:
    for attempt in range(attempts):
        try:
            return call()
        except BmcFailure as failure:
            if failure.final or attempt == attempts - 1:
                raise
            sleep(2.0 ** attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def begin(bmc: NodeBmc, credentials: Credentials, action: str, pxe_once: bool, timeout_s: float) -> Outcome | Pending:
    """The node's ask, in the protocol its BMC speaks."""
    return protocols.of(bmc.protocol).begin(bmc, credentials, action, pxe_once, timeout_s)


def settle(bmc: NodeBmc, pending: Pending, timeout_s: float) -> Outcome | None:
    """One look at a pending node, in the protocol its BMC speaks."""
    return protocols.of(bmc.protocol).settle(bmc, pending, timeout_s)


def bound_s(nodes: int, concurrency: int = DEFAULT_CONCURRENCY, attempts: int = DEFAULT_ATTEMPTS,
            timeout_s: float = 20.0, settle_s: float = 300.0, poll_s: float = POLL_S) -> float:
    """The longest `run` can take for `nodes` nodes, whatever their BMCs do (the module's docstring)."""
    waves = -(-max(nodes, 1) // max(concurrency, 1))
    one_node = attempts * timeout_s + float(2 ** (attempts - 1) - 1)  # its tries and the pauses between them
    return waves * one_node + settle_s + poll_s + waves * one_node  # the asking, then settling's last round


def rounds(pool: ThreadPoolExecutor, work: dict[str, Callable[[], T]], attempts: int,
           sleep: Callable[[float], None] = time.sleep) -> Iterator[tuple[str, T | BmcFailure]]:
    """Each node's call, retried, `pool`'s workers at once; (node, answer or failure) as each ends. An error that
    is not a BmcFailure is a fault of this program, and still only that node's: the others are answered."""
    futures = {pool.submit(_retried, call, attempts, sleep): node for node, call in work.items()}
    for future in as_completed(futures):
        try:
            yield futures[future], future.result()
        except BmcFailure as failure:
            yield futures[future], failure
        except Exception as exc:  # one node's fault never ends the fleet's run
            yield futures[future], BmcFailure(f"internal error ({type(exc).__name__}): please report it", final=True)


def run(bmcs: Sequence[NodeBmc], logins: Logins, action: str, pxe_once: bool = False,
        concurrency: int = DEFAULT_CONCURRENCY, attempts: int = DEFAULT_ATTEMPTS, timeout_s: float = 20.0,
        settle_s: float = 300.0, progress: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep, poll_s: float = POLL_S) -> FleetResult:
    """`action` on every node's server, each through its BMC's protocol; `progress(node)` as each node ends.

    Two phases, so time grows with requests, not with how long a server takes to change: every node is asked
    (the reset sent), then the nodes still changing are read in rounds, `poll_s` apart, until each reaches the
    state asked for or `settle_s` has passed since the asking ended."""
    result = FleetResult()
    started = time.monotonic()
    by_node = {b.node: b for b in bmcs}
    pending: dict[str, Pending] = {}

    def ended(node: str, answer: Outcome | Pending | BmcFailure | None) -> None:
        """Record a node's answer: a Pending (or None, not settled yet) keeps it in the next round."""
        if isinstance(answer, Pending):
            pending[node] = answer
        if answer is None or isinstance(answer, Pending):
            return
        if isinstance(answer, BmcFailure):
            result.failed[node] = answer.reason
        else:
            result.done[node] = answer
        pending.pop(node, None)
        if progress is not None:
            progress(node)

    pool = ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(bmcs) or 1)))
    try:
        asks: dict[str, Callable[[], Outcome | Pending]] = {}
        for bmc in bmcs:
            login = logins.for_node(bmc.node)
            if login is None:
                ended(bmc.node, BmcFailure("no login for this node in the credentials file", final=True))
            else:
                asks[bmc.node] = partial(begin, bmc, login, action, pxe_once, timeout_s)
        for node, answer in rounds(pool, asks, attempts, sleep):
            ended(node, answer)
        deadline = time.monotonic() + settle_s
        while pending:
            sleep(poll_s)
            looks: dict[str, Callable[[], Outcome | None]] = {
                node: partial(settle, by_node[node], p, timeout_s) for node, p in pending.items()}
            for node, seen in rounds(pool, looks, attempts, sleep):
                ended(node, seen)
            if pending and time.monotonic() >= deadline:
                for node, p in list(pending.items()):
                    ended(node, BmcFailure(f"still {p.seen or 'unknown'} {settle_s:.0f} s after the request "
                                           f"(wanted {p.wanted})"))
    finally:  # Ctrl-C: the nodes not started are not started; the requests in flight end on their own
        pool.shutdown(wait=False, cancel_futures=True)
    result.seconds = time.monotonic() - started
    return result
