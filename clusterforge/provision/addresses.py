"""Where Ansible reaches each host of an on-prem cluster: a file of `NAME ADDRESS` lines, checked against the
names `render` gave the hosts, turned into an inventory that sets `ansible_host`.

The rendered inventory names hosts as the plan does (gpu-0001, ...) and carries no addresses: a blueprint
describes racks and nodes, not a site's IP plan, and an on-prem deployment reports none (on AWS, the stack's
outputs do: `render --from-outputs`). Without an address Ansible connects to the name itself (DNS, /etc/hosts
or ~/.ssh/config). This file is the other way: one host per line, `gpu-0001 10.1.0.11` (or /etc/hosts order,
`10.1.0.11 gpu-0001`), `#` comments. It is untrusted input: every address must be an IP address, every name
one of the rendered inventory's hosts, neither twice; each mistake is reported as `file:line`.

The inventory made from it is merged by Ansible with the rendered one (a second `-i`): it survives the next
`render`, which replaces OUT as a whole.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\Z")


@dataclass(frozen=True)
class Address:
    host: str
    address: str
    line: int


def _ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def parse(text: str, file: str) -> dict[str, Address]:
    """Every host's address, by name; all the file's mistakes at once, each with its line."""
    found: dict[str, Address] = {}
    owners: dict[str, Address] = {}
    problems: list[Problem] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2:
            problems.append(Problem(f"expected NAME ADDRESS, found {len(fields)} field(s)", file, number,
                                    hint="one host per line, e.g. gpu-0001 10.1.0.11"))
            continue
        first, second = (_ip(field) for field in fields)
        if first is not None and second is None:
            address, name = first, fields[1]  # /etc/hosts order
        elif second is not None and first is None:
            name, address = fields[0], second
        else:
            what = "two addresses" if first is not None else f"no IP address ({fields[1][:80]!r} is not one)"
            problems.append(Problem(f"{what}: a line is a host name and its IPv4 or IPv6 address", file, number))
            continue
        if not _NAME.match(name):
            problems.append(Problem(f"{name[:80]!r} is not a host name", file, number))
        elif name in found:
            problems.append(Problem(f"{name}: given twice (first on line {found[name].line})", file, number))
        elif address in owners:
            problems.append(Problem(f"{name}: {address} is already {owners[address].host}'s (line "
                                    f"{owners[address].line})", file, number))
        else:
            found[name] = owners[address] = Address(name, address, number)
    if problems:
        raise ClusterforgeError(problems)
    return found


def load(path: Path) -> dict[str, Address]:
    from clusterforge.files.yamlguard import read_text

    return parse(read_text(path), str(path))


def _hosts(group: Mapping[str, Any]) -> Iterator[str]:
    yield from (group.get("hosts") or {})
    for child in (group.get("children") or {}).values():
        yield from _hosts(child or {})


def rendered_hosts(inventory: Path) -> set[str]:
    """The host names of a rendered inventory/hosts.yml."""
    from clusterforge.files.yamlguard import read_text
    from clusterforge.render.yamlout import load as load_inventory

    data = load_inventory(read_text(inventory))
    return set(_hosts((data or {}).get("all") or {}))


def check_names(addresses: Mapping[str, Address], known: set[str], file: str, inventory: str) -> None:
    """Every name must be a host of the rendered inventory: a typo would otherwise give nothing its address."""
    unknown = [a for a in addresses.values() if a.host not in known]
    if unknown:
        raise ClusterforgeError([Problem(f"{a.host}: no such host in {inventory}", file, a.line,
                                         hint="names as render wrote them (provision --list-hosts shows them)")
                                 for a in unknown])


def inventory(addresses: Mapping[str, Address]) -> dict[str, Any]:
    """An inventory that only sets each host's `ansible_host`, to be merged with the rendered one."""
    return {"all": {"hosts": {a.host: {"ansible_host": a.address} for a in addresses.values()}}}
