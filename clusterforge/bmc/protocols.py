"""The BMC protocols clusterforge speaks, by the name the BMC document gives (`protocol: ipmi`).

Each is one module with the functions `clusterforge.bmc.interface.BmcProtocol` names (docs/contributing.md, "Add a
BMC protocol"); this table is the one line that registers it. The modules import their client library (sushy,
pyghmi) only when a node asks, so naming every protocol here costs nothing where one is unused.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable

from clusterforge.bmc import ipmi, redfish
from clusterforge.bmc.interface import BmcProtocol

PROTOCOLS: dict[str, BmcProtocol] = {"redfish": redfish, "ipmi": ipmi}
DEFAULT = "redfish"


def of(name: str) -> BmcProtocol:
    """The protocol module of a name the BMC document was checked to hold."""
    return PROTOCOLS[name]


def scheme_of(name: str) -> dict[str, int]:
    """Its URL schemes, each with its default port."""
    return dict(PROTOCOLS[name].SCHEMES)


def nics_of(name: str) -> Callable[..., list[str]] | None:
    """The protocol's `nics(bmc, credentials, timeout_s)`, which lists a server's MACs, where it has one: an
    optional function, as not every protocol can (IPMI has no standard way)."""
    found = getattr(PROTOCOLS[name], "nics", None)
    return found if callable(found) else None


def missing_clients(names: Iterable[str]) -> list[str]:
    """The client libraries of these protocols that this Python cannot import, each named once."""
    return sorted({PROTOCOLS[n].CLIENT for n in names if importlib.util.find_spec(PROTOCOLS[n].CLIENT) is None})
