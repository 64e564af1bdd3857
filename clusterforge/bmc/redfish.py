"""One node's power and boot through its BMC's Redfish service, on OpenStack's `sushy` (the client Ironic and
Metal3 use: typed resources, sessions, the standard's action bodies and allowed values).

Why sushy over DMTF's thinner `redfish` library: it reads a system's allowed `ResetType`s and its boot override
fields as the schema defines them, so a BMC without `PowerCycle` gets the nearest equivalent rather than a 400, and
a PXE override is checked by reading the target back. Actions are not instant on real BMCs (nor on the emulator):
after a reset the state is read again (`settle`, which `fleet` calls in rounds for every node still changing, so a
slow server holds no worker while it boots). Errors become one line per node for `fleet`, which decides what to
retry: a refused login or an unknown system is final; no answer or a 5xx is not.

What crosses the wire is `transport`'s: every request on the node's own BMC, every answer bounded in bytes, and
`timeout_s` the deadline of one whole ask (or one later look), whatever the BMC does. Nothing a BMC answers ends
more than its own node's request: any error at all becomes that node's BmcFailure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clusterforge.bmc import transport
from clusterforge.bmc.credentials import Credentials
from clusterforge.bmc.interface import BmcFailure, NodeBmc, Outcome, Pending

CLIENT = "sushy"
SCHEMES = transport.DEFAULT_PORTS  # http:// only for loopback or with allow_plain_http (clusterforge.bmc.hosts)
ROOT_PATH = "/redfish/v1/"  # the service root every Redfish service serves (DSP0266)


def _session(bmc: NodeBmc, credentials: Credentials, timeout_s: float) -> tuple[Any, Any]:
    """The service root, logged in with basic auth, over the bounded transport, and that transport's adapter.

    Basic auth because every Redfish service must take it (DSP0266), and unlike a session it leaves nothing open
    on a BMC that holds only a handful of sessions (12,500 commands a day would leak them until they time out).
    sushy is given its connector, so the same code holds on sushy 5.5 (Debian 13's, which a controller's
    power-save programs import) and on the pinned release: the deadline and the retries are the transport's."""
    import sushy
    from sushy import auth

    connection, adapter = transport.connector(bmc.url, bmc.verify, timeout_s)
    transport.begin_exchange(adapter, bmc.url, timeout_s)
    root = sushy.Sushy(bmc.url, auth=auth.BasicAuth(credentials.username, credentials.password),
                       verify=bmc.verify, connector=connection)
    return root, adapter


def _system(root: Any, bmc: NodeBmc) -> Any:
    if bmc.system is not None:  # the standard's path: no request for the collection
        return root.get_system(f"{ROOT_PATH}Systems/{bmc.system}")
    members = root.get_system_collection().members_identities
    if len(members) != 1:
        raise BmcFailure(f"the BMC holds {len(members)} systems: give this node's `system:` in the BMC document",
                         final=True)
    return root.get_system(members[0])  # on another host it is refused by the transport, and nothing is sent


def _value(enum_or_str: Any) -> str:
    return str(getattr(enum_or_str, "value", enum_or_str) or "")


def _boot(system: Any) -> str:
    enabled = _value(system.boot.enabled)
    return f"{_value(system.boot.target)} ({enabled})" if enabled in ("Once", "Continuous") else ""


def _reset(system: Any, choices: tuple[str, ...]) -> str:
    """The first of `choices` the system allows (the standard's order of preference), sent."""
    import sushy

    allowed = {_value(v) for v in system.get_allowed_reset_system_values()}
    for choice in choices:
        if choice in allowed or not allowed:
            system.reset_system(sushy.ResetType(choice))
            return choice
    raise BmcFailure(f"the BMC allows none of {', '.join(choices)} (it allows {', '.join(sorted(allowed))})",
                     final=True)


@dataclass(frozen=True)
class _Handle:
    """What a pending node keeps between looks: its system resource and its transport, given a new exchange for
    each look."""

    system: Any
    adapter: Any = None


def _close(system: Any) -> None:
    """Give the BMC's connection back between requests: 12,500 open sockets would pass any descriptor limit;
    the session (and its login) stays, and the next request opens a connection again."""
    connector = getattr(system, "_conn", None)
    session = getattr(connector, "_session", None)
    if session is not None:
        session.close()


def _translated(bmc: NodeBmc, call: Callable[[], Any]) -> Any:
    """`call()`, with sushy's errors as one-line BmcFailures (final where asking again cannot help), and any other
    error as this node's failure: what one BMC answers never ends the fleet's run."""
    from sushy import exceptions

    try:
        return call()
    except BmcFailure:
        raise
    except exceptions.AccessError as exc:
        raise BmcFailure(f"credentials refused (HTTP {exc.status_code})", final=True) from None
    except exceptions.ResourceNotFoundError:
        raise BmcFailure(f"no system {bmc.system or ''} on this BMC".replace("  ", " "), final=True) from None
    except exceptions.HTTPError as exc:
        raise BmcFailure(f"the BMC answered HTTP {exc.status_code}") from None
    except exceptions.ConnectionError as exc:  # the transport's own failures arrive as BmcFailure, not here
        raise BmcFailure(f"no answer from {bmc.url}: {_first_line(str(exc))}") from None
    except exceptions.SushyError as exc:
        raise BmcFailure(f"Redfish error: {_first_line(str(exc))}") from None
    except Exception as exc:  # a malformed answer (bad JSON, wrong types, depth) is the node's alone
        cause = exc.__context__ if isinstance(exc.__context__, BmcFailure) else None
        if cause is not None:
            raise cause from None
        raise BmcFailure(f"the BMC's answer could not be read ({type(exc).__name__})", final=True) from None


def _first_line(text: str) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 160 else line[:157].rsplit(" ", 1)[0] + " ..."


def begin(bmc: NodeBmc, credentials: Credentials, action: str, pxe_once: bool = False,
          timeout_s: float = 20.0) -> Outcome | Pending:
    """Ask one node's BMC for `action` (after a one-time PXE override when `pxe_once`): an Outcome when nothing
    is left to wait for, else a Pending for `settle`. Raises BmcFailure with a one-line reason."""
    import sushy

    def ask() -> Outcome | Pending:
        root, adapter = _session(bmc, credentials, timeout_s)
        system = _system(root, bmc)
        warning = ""
        if pxe_once:
            system.set_system_boot_options(sushy.BootSource.PXE, enabled=sushy.BootSourceOverrideEnabled.ONCE)
            system.refresh()
            if _value(system.boot.target) != "Pxe":  # test the target, not only the flag (some BMCs keep it)
                raise BmcFailure(f"the BMC kept boot target {_value(system.boot.target)} after the PXE override")
            if _value(system.boot.enabled) == "Continuous":  # it would boot from the network on every restart
                warning = "the one-time network boot reads back as Continuous: every restart will boot from PXE"
        state = _value(system.power_state)
        wanted, did = "", "read"
        if action == "on" and state != "On":
            wanted, did = "On", f"powered on ({_reset(system, ('On', 'ForceOn'))})"
        elif action == "off" and state != "Off":
            wanted, did = "Off", f"powered off ({_reset(system, ('ForceOff',))})"
        elif action == "cycle":
            sent = _reset(system, ("PowerCycle", "ForceRestart") if state == "On" else ("On", "ForceOn"))
            wanted = "On"
            did = f"cycled ({sent})" if state == "On" else f"powered on ({sent}; it was {state or 'unknown'})"
        elif action in ("on", "off"):
            did = f"already {action}"
        _close(system)
        if wanted:
            return Pending(bmc.node, wanted, did, _Handle(system, adapter), warning, state or "unknown")
        return Outcome(bmc.node, state, _boot(system), did, warning)

    result: Outcome | Pending = _translated(bmc, ask)
    return result


def settle(bmc: NodeBmc, pending: Pending, timeout_s: float = 20.0) -> Outcome | None:
    """One look at a pending node (one request, `timeout_s` whole): its Outcome once its power state is the one
    asked for, else None."""

    def look() -> Outcome | None:
        handle: _Handle = pending.handle
        if handle.adapter is not None:
            transport.begin_exchange(handle.adapter, bmc.url, timeout_s)
        handle.system.refresh()
        _close(handle.system)
        state = _value(handle.system.power_state)
        pending.seen = state or "unknown"
        if state != pending.wanted:
            return None
        return Outcome(pending.node, state, _boot(handle.system), pending.did, pending.warning)

    result: Outcome | None = _translated(bmc, look)
    return result



MAX_NICS = 64  # a server with more listed interfaces than this is answering something else


def nics(bmc: NodeBmc, credentials: Credentials, timeout_s: float = 20.0) -> list[str]:
    """The MAC addresses of the server's network interfaces, as its BMC lists them (the system's
    `EthernetInterfaces`, in the order of their ids): what a DHCP reservation binds an address to. Raises
    BmcFailure with a one-line reason."""

    def ask() -> list[str]:
        root, _ = _session(bmc, credentials, timeout_s)
        system = _system(root, bmc)
        collection = system.ethernet_interfaces
        members = sorted(collection.members_identities)
        if len(members) > MAX_NICS:
            raise BmcFailure(f"the BMC lists {len(members)} network interfaces (at most {MAX_NICS} are read)",
                             final=True)
        found = [_value(collection.get_member(member).mac_address) for member in members]
        _close(system)
        return [mac for mac in found if mac]

    result: list[str] = _translated(bmc, ask)
    return result
