"""The fleet runner's own rules, with the BMC calls replaced: how many run at once, what is asked again and after
how long, what a node that never settles becomes. (tests/test_bmc_power.py runs it against real Redfish.)"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from clusterforge.bmc import fleet
from clusterforge.bmc.credentials import Credentials, Logins
from clusterforge.bmc.interface import BmcFailure, NodeBmc, Outcome, Pending

LOGIN = Logins(Credentials("admin", "secret"))
TARGETS = [NodeBmc(f"gpu-{i:04d}", "https://127.0.0.1:1", None, True) for i in range(1, 41)]


def test_no_more_than_the_concurrency_is_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    lock, now, most, full = threading.Lock(), [0], [0], threading.Event()

    def begin(target: NodeBmc, *_: Any) -> Outcome:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
            if now[0] >= 5:
                full.set()
        full.wait(10)  # the first calls hold their workers until five are in flight, however slow threads start
        time.sleep(0.01)  # and a sixth would have time to come in
        with lock:
            now[0] -= 1
        return Outcome(target.node, "On", "", "read")

    monkeypatch.setattr(fleet, "begin", begin)
    result = fleet.run(TARGETS, LOGIN, "status", concurrency=5)
    assert len(result.done) == 40 and most[0] == 5


def test_silence_is_asked_again_with_growing_pauses_and_a_refused_login_is_not(monkeypatch) -> None:
    tries: dict[str, int] = {}

    def begin(target: NodeBmc, *_: Any) -> Outcome:
        tries[target.node] = tries.get(target.node, 0) + 1
        if target.node == "gpu-0001" and tries[target.node] < 3:
            raise BmcFailure("no answer from https://127.0.0.1:1: timed out")
        if target.node == "gpu-0002":
            raise BmcFailure("credentials refused (HTTP 401)", final=True)
        return Outcome(target.node, "Off", "", "read")

    pauses: list[float] = []
    monkeypatch.setattr(fleet, "begin", begin)
    result = fleet.run(TARGETS[:3], LOGIN, "status", attempts=3, sleep=pauses.append)
    assert sorted(result.done) == ["gpu-0001", "gpu-0003"] and tries["gpu-0001"] == 3
    assert result.failed == {"gpu-0002": "credentials refused (HTTP 401)"} and tries["gpu-0002"] == 1
    assert sorted(pauses) == [1.0, 2.0]


def test_a_node_that_never_settles_fails_with_its_state_and_the_others_finish(monkeypatch) -> None:
    def begin(target: NodeBmc, *_: Any) -> Pending:
        return Pending(target.node, "On", "powered on (On)", seen="PoweringOn")

    def settle(target: NodeBmc, pending: Pending, *_: Any) -> Outcome | None:
        return None if target.node == "gpu-0001" else Outcome(target.node, "On", "", pending.did)

    monkeypatch.setattr(fleet, "begin", begin)
    monkeypatch.setattr(fleet, "settle", settle)
    ended: list[str] = []
    result = fleet.run(TARGETS[:4], LOGIN, "on", settle_s=0, poll_s=0, progress=ended.append)
    assert result.failed == {"gpu-0001": "still PoweringOn 0 s after the request (wanted On)"}
    assert sorted(result.done) == ["gpu-0002", "gpu-0003", "gpu-0004"] and sorted(ended) == [
        t.node for t in TARGETS[:4]]
