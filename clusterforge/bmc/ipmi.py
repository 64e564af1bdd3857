"""One node's power and boot through its BMC's IPMI 2.0 service (RMCP+ over UDP, port 623), on `pyghmi`, the
IPMI library OpenStack keeps (VirtualBMC's server side is pyghmi's too).

IPMI is what the servers without Redfish speak, and what many with it still speak faster: a power read is one
datagram each way. The login is RMCP+ (RAKP with HMAC, AES-encrypted payloads), so unlike plain http:// it never
crosses the network in clear text. The chassis commands map onto clusterforge's actions as Redfish's resets do:
`on` is chassis power up, `off` power down (immediate, as ForceOff), `cycle` a power cycle of a server that is on
and power up of one that is off; a one-time network boot is the boot flags' PXE device, not persistent, read back
after it is set (a BMC that keeps it persistent is warned of, as with Redfish).

Bounds: every answer is one datagram pyghmi parses (no stream to drip or to grow), a request not answered is
resent by pyghmi on its own short schedule and given up within seconds, and the deadline `timeout_s` is checked
between the requests of one ask (the login, the reads, the command): an ask ends at most one request past it.
Nothing a BMC answers ends more than its own node's request: any error at all becomes that node's BmcFailure.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from clusterforge.bmc.credentials import Credentials
from clusterforge.bmc.interface import BmcFailure, NodeBmc, Outcome, Pending

CLIENT = "pyghmi"
SCHEMES = {"ipmi": 623}
CHASSIS_NETFN, CHASSIS_CONTROL, POWER_CYCLE = 0x00, 0x02, 0x02  # IPMI 2.0, 28.3: Chassis Control, power cycle
STATES = {"on": "On", "off": "Off"}  # pyghmi's power states in clusterforge's (Redfish's) words
MAX_USER = 16  # IPMI's user name field


class _Deadline:
    """One ask's deadline, checked between its requests."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s, self.ends = timeout_s, time.monotonic() + timeout_s

    def check(self) -> None:
        if time.monotonic() > self.ends:
            raise BmcFailure(f"no whole answer within {self.timeout_s:g} s")


@dataclass(frozen=True)
class _Handle:
    """What a pending node keeps between looks: its logged-in session, the boot set, and the session's key (which
    holds the password: never shown)."""

    session: Any
    boot: str
    key: tuple[str, str, str, int, None] = field(repr=False)


RAKP_HMAC_SHA1 = 1  # IPMI 2.0, table 13-17: the authentication algorithm of cipher suite 3
_AUTH_ALGORITHM = 16  # its place in the RMCP+ Open Session Response (table 13-10): the algorithm the BMC chose


def _follow_the_bmcs_algorithms() -> None:
    """Make pyghmi's client use the algorithms the BMC's Open Session Response names.

    pyghmi (1.6) proposes cipher suite 17 (SHA-256) first and takes for granted that a BMC that answers without an
    error accepted it. OpenStack's VirtualBMC (3.3, whose server is pyghmi's own) answers that proposal with suite
    3's algorithms (SHA-1) instead, as the RMCP+ answer is allowed to name, and the client then misread the BMC's
    RAKP 2 (`struct.error`): no login to VirtualBMC ever succeeded (found by the metal lab, docs/lab.md). A BMC that
    names SHA-1 here now gets a SHA-1 session, as ipmitool gives it; a refusal still falls back as before."""
    from pyghmi.ipmi.private import session as sessions

    original = getattr(sessions.Session, "_got_rmcp_response", None)
    if original is None or getattr(original, "follows_the_bmc", False):
        return  # applied already, or a pyghmi of another shape: its own login as it is

    def got_rmcp_response(self: Any, data: Any) -> Any:
        if (len(data) > _AUTH_ALGORITHM and data[0] == self.rmcptag and data[1] == 0 and self.attemptedhash == 256
                and data[_AUTH_ALGORITHM] == RAKP_HMAC_SHA1):
            self.attemptedhash, self.currhashlib, self.currhashlen = 1, hashlib.sha1, 12
        return original(self, data)

    got_rmcp_response.follows_the_bmc = True  # type: ignore[attr-defined]
    sessions.Session._got_rmcp_response = got_rmcp_response


def _login(key: tuple[str, str, str, int, None]) -> Any:
    from pyghmi.ipmi import command

    _follow_the_bmcs_algorithms()

    host, user, password, port, _kg = key
    if len(user.encode()) > MAX_USER:
        raise BmcFailure(f"an IPMI user name is at most {MAX_USER} bytes", final=True)
    return command.Command(bmc=host, userid=user, password=password, port=port, keepalive=False)


def _key(bmc: NodeBmc, credentials: Credentials) -> tuple[str, str, str, int, None]:
    """What pyghmi files a session under: host, login, port, no Kg."""
    parts = urlsplit(bmc.url)
    return (parts.hostname or "", credentials.username, credentials.password, parts.port or SCHEMES["ipmi"], None)


def _logout(command: Any, key: tuple[str, str, str, int, None]) -> None:
    """End the BMC's session now: a BMC holds a handful, and 12,500 asks a day would use them up.

    pyghmi (1.6) keeps a session that logged in under its key in the table of sessions still logging in, and hands
    it to the next `Command` for the same BMC and login, logged out and unusable: it is taken out of that table
    here, so the next ask logs in afresh."""
    from pyghmi.ipmi.private import session as sessions

    session = command.ipmi_session
    with contextlib.suppress(Exception):  # the session is gone or broken already: nothing is held
        session.logout()
    sessions.Session.initting_sessions.pop(key, None)


def _power(session: Any) -> str:
    state = str(session.get_power().get("powerstate", ""))
    return STATES.get(state, state.capitalize() or "unknown")


# pyghmi (1.6) takes its two module locks in opposite orders on two paths: a session that times out re-logs in
# holding WAITING_SESSIONS and then takes KEEPALIVE_SESSIONS, while another thread's send holds KEEPALIVE_SESSIONS
# and then takes WAITING_SESSIONS (session.py wait_for_rsp/_relog against send_payload/_xmit_packet). The fleet's
# threads hit it in CI: three asks waited on each other for good. So one of this process's threads speaks through
# pyghmi at a time; pyghmi's own I/O thread still receives for every session.
_PYGHMI = threading.Lock()


def _translated(bmc: NodeBmc, call: Callable[[], Any]) -> Any:
    """`call()`, one thread at a time (`_PYGHMI`), with pyghmi's errors as one-line BmcFailures: a refused login
    is final, silence is not."""
    from pyghmi import exceptions

    try:
        with _PYGHMI:
            return call()
    except BmcFailure:
        raise
    except exceptions.IpmiException as exc:
        said = str(exc.args[0]) if exc.args and exc.args[0] else ""
        if not said or said == "None":
            raise BmcFailure(f"no answer from {bmc.url}") from None
        if "password" in said.lower() or "unauthorized" in said.lower() or "user" in said.lower():
            raise BmcFailure("credentials refused (IPMI login)", final=True) from None
        raise BmcFailure(f"IPMI error: {said.splitlines()[0][:160]}") from None
    except Exception as exc:  # a malformed datagram (bad length, wrong fields) is the node's alone
        raise BmcFailure(f"the BMC's answer could not be read ({type(exc).__name__})", final=True) from None


def _network_boot(session: Any, deadline: _Deadline) -> tuple[str, str]:
    """Set a one-time PXE boot and read it back: (boot as shown, warning)."""
    session.set_bootdev("network", persist=False)
    deadline.check()
    got = session.get_bootdev()
    if got.get("bootdev") != "network":
        raise BmcFailure(f"the BMC kept boot device {got.get('bootdev')} after the PXE override")
    if got.get("persistent"):
        return "Pxe (Continuous)", ("the one-time network boot reads back as persistent: every restart will boot "
                                    "from PXE")
    return "Pxe (Once)", ""


def begin(bmc: NodeBmc, credentials: Credentials, action: str, pxe_once: bool = False,
          timeout_s: float = 20.0) -> Outcome | Pending:
    """Ask one node's BMC for `action` (after a one-time PXE boot when `pxe_once`): an Outcome when nothing is
    left to wait for, else a Pending for `settle`. Raises BmcFailure with a one-line reason."""

    def ask() -> Outcome | Pending:
        deadline = _Deadline(timeout_s)
        key = _key(bmc, credentials)
        session = _login(key)
        try:
            deadline.check()
            boot, warning = _network_boot(session, deadline) if pxe_once else ("", "")
            deadline.check()
            state = _power(session)
            wanted, did = "", "read"
            if action == "on" and state != "On":
                wanted, did = "On", "powered on (chassis power up)"
                session.set_power("on", wait=False)
            elif action == "off" and state != "Off":
                wanted, did = "Off", "powered off (chassis power down)"
                session.set_power("off", wait=False)
            elif action == "cycle" and state == "On":
                wanted, did = "On", "cycled (chassis power cycle)"
                session.raw_command(netfn=CHASSIS_NETFN, command=CHASSIS_CONTROL, data=[POWER_CYCLE])
            elif action == "cycle":
                wanted, did = "On", f"powered on (chassis power up; it was {state})"
                session.set_power("on", wait=False)
            elif action in ("on", "off"):
                did = f"already {action}"
        except BaseException:
            _logout(session, key)
            raise
        if wanted:
            return Pending(bmc.node, wanted, did, _Handle(session, boot, key), warning, state)
        _logout(session, key)
        return Outcome(bmc.node, state, boot, did, warning)

    result: Outcome | Pending = _translated(bmc, ask)
    return result


def settle(bmc: NodeBmc, pending: Pending, timeout_s: float = 20.0) -> Outcome | None:
    """One look at a pending node (one power read on the ask's session): its Outcome once its power state is the
    one asked for, else None."""
    handle: _Handle = pending.handle
    session, boot, key = handle.session, handle.boot, handle.key

    def look() -> Outcome | None:
        held = getattr(session, "ipmi_session", None)
        if held is None or held.broken or not held.logged:
            # the ask's session broke (its answers came later than pyghmi's retries on a loaded machine): a
            # broken session never answers again, so this look, and each one retried, logs in afresh
            fresh = _login(key)
            try:
                pending.seen = _power(fresh)
            finally:
                _logout(fresh, key)
        else:
            pending.seen = _power(session)
        if pending.seen != pending.wanted:
            return None
        _logout(session, key)
        return Outcome(pending.node, pending.seen, boot, pending.did, pending.warning)

    result: Outcome | None = _translated(bmc, look)
    return result
