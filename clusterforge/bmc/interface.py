"""What every BMC protocol gives the fleet runner, and what it is given: one node's BMC, an answer, a wait.

A protocol (Redfish over HTTPS, IPMI over RMCP+) is one module with the functions `BmcProtocol` names, registered
by name in `clusterforge.bmc.protocols`. The fleet runner (`fleet`), `clusterforge power` and the on-prem
power-save provider speak only this: ask a node's BMC for an action (`begin`), look again while its server changes
state (`settle`). What a protocol sends, how it logs in and how it bounds an answer are its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from clusterforge.bmc.credentials import Credentials

ACTIONS = ("status", "on", "off", "cycle")


class BmcFailure(Exception):
    """One node's BMC could not do what was asked; `final` when asking again cannot help (credentials, no system,
    an answer that breaks the rules)."""

    def __init__(self, reason: str, final: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.final = reason, final


@dataclass(frozen=True)
class NodeBmc:
    """One node's BMC as a protocol takes it: where it answers, which system is the node's, how its certificate
    is checked, and which protocol it speaks (the BMC document's `protocol:`)."""

    node: str
    url: str
    system: str | None
    verify: bool | str  # requests' `verify`: True, False, or a CA bundle's path (https:// only)
    protocol: str = "redfish"

    @property
    def clear_text(self) -> bool:
        """The login crosses a network unencrypted: plain http:// to a host that is not this one."""
        return self.url.startswith("http://") and not loopback(self.url)


def loopback(url: str) -> bool:
    import ipaddress

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Outcome:
    """What one node's BMC did: its power state after, its boot override, and what was changed."""

    node: str
    power: str  # On, Off, PoweringOn, PoweringOff
    boot: str  # the one-time override, e.g. "Pxe (Once)", or "" when none
    did: str  # "powered on", "already off", "cycled", "read", ...
    warning: str = ""  # what the BMC did that was not asked, e.g. a one-time boot kept as continuous


@dataclass
class Pending:
    """A node whose BMC took the request and whose power state has not reached `wanted` yet: `seen` is the state
    last read, `handle` what its protocol keeps between looks (a Redfish system resource, an IPMI login)."""

    node: str
    wanted: str
    did: str
    handle: Any = None
    warning: str = ""
    seen: str = ""


class BmcProtocol(Protocol):
    """A protocol module: the URL schemes its BMCs are named by, and one node's ask and later looks. Both raise
    BmcFailure with a one-line reason; any other error of theirs is still only that node's (the fleet catches it)."""

    @property
    def SCHEMES(self) -> Mapping[str, int]:
        """The URL schemes its BMCs are named by in the BMC document, each with its default port."""
        ...

    @property
    def CLIENT(self) -> str:
        """The client library it speaks through, as imported (`sushy`), asked for before a run starts."""
        ...

    def begin(self, bmc: NodeBmc, credentials: Credentials, action: str, pxe_once: bool,
              timeout_s: float) -> Outcome | Pending:
        """Ask for `action` (after a one-time network boot when `pxe_once`): an Outcome when nothing is left to
        wait for, else a Pending for `settle`."""
        ...

    def settle(self, bmc: NodeBmc, pending: Pending, timeout_s: float) -> Outcome | None:
        """One look at a pending node: its Outcome once its power state is the one asked for, else None (its
        `seen` updated)."""
        ...
