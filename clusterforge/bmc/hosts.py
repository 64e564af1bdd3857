"""The BMC document: where each node's BMC answers, and how its certificate is checked.

A blueprint describes racks and nodes, never a site's management network, so the BMCs are a document of their own
(`bmcs.yaml`), kept beside the addresses file `clusterforge inventory --addresses` reads. It is untrusted input like
every other file a pull request can touch: read bounded, every key known, every URL an http(s) URL with a host and
no user or password in it (credentials come from the environment or a 0600 file, never from a document a
repository holds), every mistake reported as `file:line: path: message`.

    defaults: {ca_file: /etc/clusterforge/bmc-ca.pem}   # TLS is verified; verify_tls: false only by name
    bmcs:
      gpu-0001: {url: "https://10.2.0.11"}              # the BMC's only system, over Redfish
      gpu-0002: {url: "https://10.2.0.20", system: "2"} # a BMC (a chassis manager) holding several
      gpu-0003: {url: "ipmi://10.2.0.30", protocol: ipmi}  # IPMI over RMCP+ (UDP 623)

Each BMC speaks the protocol it names, else `defaults: {protocol: ...}`, else Redfish (clusterforge.bmc.protocols
lists them); its URL's scheme is one of that protocol's (https/http for Redfish, ipmi for IPMI).

Every request for a node goes to its URL's scheme, host and port and nowhere else (clusterforge.bmc.transport).
Plain `http://` carries the login in clear text, so it is taken for a loopback address (an emulator on this host)
and otherwise only with `defaults: {allow_plain_http: true}`, named as `verify_tls: false` is. Two nodes on one
server would have one node's `off` power off the other's, so each (URL, system) belongs to one node, and a BMC
whose system is not named holds that node alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from clusterforge.bmc.interface import NodeBmc
from clusterforge.bmc.protocols import DEFAULT, PROTOCOLS, scheme_of
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.source import Source
from clusterforge.core.validation import validate
from clusterforge.files.yamlsource import load_file

NODE = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$"
SYSTEM = r"^[A-Za-z0-9._:-]{1,128}$"  # a Redfish member id: a path segment, nothing to escape
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_ROOT = re.compile(rf"[a-z]+://(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]{{2,45}}\])(?::[0-9]{{1,5}})?/?")
MAX_BMCS = 200_000  # twice the largest cluster the project plans for; a bigger document is a mistake or a bomb


def _schemes() -> dict[str, str]:
    """Every URL scheme a protocol is named by, and that protocol."""
    return {scheme: name for name in PROTOCOLS for scheme in scheme_of(name)}


def _url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in _schemes() or not parts.hostname:
        raise ValueError("a BMC's URL is https://HOST[:PORT] (Redfish; http:// only for an emulator) or "
                         "ipmi://HOST[:PORT] (IPMI)")
    if parts.username or parts.password:
        raise ValueError("a BMC's URL carries no user or password: give them in CLUSTERFORGE_BMC_USERNAME and "
                         "CLUSTERFORGE_BMC_PASSWORD or a --credentials file")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("a BMC's URL is its root, https://HOST[:PORT]: the protocol's paths are the client's")
    if not _ROOT.fullmatch(value) or not _port_ok(value):
        # urlsplit takes spaces, newlines and braces in a host; the URL reaches requests and every per-node line
        raise ValueError("a BMC's host is a DNS name, an IPv4 address or a bracketed IPv6 address, and its port "
                         "1-65535")
    return value.rstrip("/")


def _port_ok(value: str) -> bool:
    try:
        port = urlsplit(value).port
    except ValueError:
        return False
    return port is None or port > 0


def _protocol(name: str) -> str:
    if name not in PROTOCOLS:
        raise ValueError(f"no BMC protocol {name!r}: clusterforge speaks {', '.join(sorted(PROTOCOLS))}")
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


ProtocolName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$"), AfterValidator(_protocol)]


class Bmc(_Strict):
    url: Annotated[str, Field(max_length=2048), AfterValidator(_url)]
    system: str | None = Field(None, pattern=SYSTEM, description="the system's id on a BMC that holds several")
    protocol: ProtocolName | None = Field(None, description="the protocol this BMC speaks (else the defaults')")


class Defaults(_Strict):
    ca_file: Path | None = Field(None, description="the CA bundle BMC certificates are checked against")
    verify_tls: bool = Field(True, description="false turns certificate checks off (an emulator, a lab)")
    allow_plain_http: bool = Field(False, description="true lets http:// URLs of hosts other than loopback be used: "
                                                      "the login then crosses the network in clear text (a lab)")
    protocol: ProtocolName = Field(DEFAULT, description="the protocol of every BMC that names none")


class BmcDocument(_Strict):
    defaults: Defaults = Defaults()
    bmcs: dict[Annotated[str, Field(pattern=NODE)], Bmc] = Field(max_length=MAX_BMCS)


def _server(url: str, system: str | None) -> tuple[str, str | None]:
    """What identifies the server a node's BMC powers: the BMC's host and port and the system's id."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or scheme_of(_schemes()[scheme])[scheme]
    return f"{(parts.hostname or '').lower()}:{port}", system


def _protocol_of(document: BmcDocument, bmc: Bmc) -> str:
    return bmc.protocol or document.defaults.protocol


def _wrong_schemes(document: BmcDocument, source: Source) -> list[Problem]:
    """Each BMC whose URL's scheme is not one of its protocol's (an https:// URL for an IPMI BMC)."""
    problems = []
    speaks = _schemes()
    for node, bmc in document.bmcs.items():
        protocol = _protocol_of(document, bmc)
        schemes = scheme_of(protocol)
        scheme = urlsplit(bmc.url).scheme.lower()
        if scheme not in schemes:
            problems.append(source.problem(
                ("bmcs", node, "url"), f"a {protocol} BMC's URL is {' or '.join(f'{s}://' for s in schemes)}...",
                hint=f"give the URL its protocol's scheme, or the protocol its URL speaks (protocol: "
                     f"{speaks[scheme]})"))
    return problems


def _shared_servers(document: BmcDocument, source: Source) -> list[Problem]:
    """Each node that would power a server an earlier node already powers, named with both lines: the same
    (BMC, system), or a BMC shared where one of its nodes names no system (the BMC's only system is that node's)."""
    problems: list[Problem] = []
    by_server: dict[tuple[str, str | None], str] = {}
    first_on: dict[str, str] = {}  # the first node of each BMC
    unnamed_on: dict[str, str] = {}  # the first node of each BMC that names no system
    for node, bmc in document.bmcs.items():
        place, system = _server(bmc.url, bmc.system)
        other = by_server.get((place, system)) or (first_on if system is None else unnamed_on).get(place)
        by_server.setdefault((place, system), node)
        first_on.setdefault(place, node)
        if system is None:
            unnamed_on.setdefault(place, node)
        if other is not None:
            shown_system = f" system {system}" if system else ""
            problems.append(source.problem(
                ("bmcs", node), f"the same server as {other} (line {source.line_of(('bmcs', other))}): "
                                f"{bmc.url}{shown_system}",
                hint="each server belongs to one node: give each node the system: its BMC holds it by, or correct "
                     "the URL"))
    return problems


def load(path: Path) -> dict[str, NodeBmc]:
    """Every node's BMC, by node name; exit 2 with the location of every mistake."""
    source = load_file(path)
    document = validate(BmcDocument, source)
    defaults = document.defaults
    problems = _shared_servers(document, source) + _wrong_schemes(document, source)
    if defaults.ca_file is not None and not defaults.ca_file.is_file():
        problems.append(source.problem(("defaults", "ca_file"), f"no such file: {defaults.ca_file}"))
    if not defaults.allow_plain_http:
        problems += [source.problem(("bmcs", node, "url"), "http:// sends the BMC login in clear text",
                                    hint="use https://, or set defaults: {allow_plain_http: true} for a lab or an "
                                         "emulator")
                     for node, bmc in document.bmcs.items()
                     if NodeBmc(node, bmc.url, bmc.system, False).clear_text]
    if problems:
        raise ClusterforgeError(problems)
    verify: bool | str = str(defaults.ca_file) if defaults.ca_file is not None else defaults.verify_tls
    return {node: NodeBmc(node, bmc.url, bmc.system, verify, _protocol_of(document, bmc))
            for node, bmc in document.bmcs.items()}


def pick(targets: dict[str, NodeBmc], nodes: list[str], file: str) -> list[NodeBmc]:
    """The BMCs of `nodes`, in their order; all the nodes the document lacks named at once."""
    missing = [n for n in nodes if n not in targets]
    if missing:
        from clusterforge.core.hostlist import compress

        raise ClusterforgeError(Problem(f"{len(missing)} node(s) have no BMC in the document: {compress(missing)}",
                                        file, hint="add them under bmcs:, or name only nodes it has"))
    return [targets[n] for n in nodes]
