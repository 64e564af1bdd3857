"""What a `--limit` selected: the hosts `ansible-playbook --list-hosts` names, and Ansible's own words when the
limit (with the inventory and the plays' host patterns) leaves no host at all.

Ansible reads a limit as its host patterns (names, groups, `*` wildcards, `~regex`, `group[0:15]` subscripts),
not as a SLURM hostlist: `gpu-00[01:16]` is the subscript [01:16] of a host `gpu-00` that no inventory has. A
limit that matches nothing is bad input, said with Ansible's reason, not a failed run.
"""

from __future__ import annotations

import re

from clusterforge.core.errors import ClusterforgeError, Problem

# ansible-core's messages for a pattern or limit that matched nothing, old and new wordings.
_NOTHING = re.compile(r"Could not match supplied host pattern|no hosts to target|does not match any hosts|"
                      r"[Nn]o hosts matched")
_HOSTS_HEADER = re.compile(r"^\s+hosts \(\d+\):\s*$")
_NUMBERS = re.compile(r"(\d+)")


def ansible_reasons(stdout: str) -> list[str]:
    """Ansible's lines about patterns that matched nothing, as it printed them."""
    return [line.strip() for line in stdout.splitlines() if _NOTHING.search(line)]


def unmatched_limit(stdout: str, limit: str | None, inventory: str) -> ClusterforgeError | None:
    """The error for a run that stopped because nothing matched; None when it stopped for another reason."""
    reasons = ansible_reasons(stdout)
    if not reasons or not any("no hosts" in r.lower() or "any hosts" in r for r in reasons):
        return None
    what = f"{limit!r} matches no host" if limit else "no host for the plays"
    return ClusterforgeError(Problem(f"{what}: " + " | ".join(reasons), inventory, path="--limit" if limit else "",
                                     hint="an Ansible pattern over these names and groups, e.g. gpu-0001,gpu-0002, "
                                          "pool_gpu, 'pool_gpu[0:15]', 'gpu-00*' (--list-hosts shows them)"))


def _natural(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in _NUMBERS.split(name)]


def listed_hosts(stdout: str) -> list[str]:
    """The hosts `--list-hosts` printed under each play's `hosts (N):`, once each, in name order."""
    hosts: set[str] = set()
    listing = False
    for line in stdout.splitlines():
        if _HOSTS_HEADER.match(line):
            listing = True
        elif listing and line.startswith("      ") and line.strip():
            hosts.add(line.strip())
        else:
            listing = False
    return sorted(hosts, key=_natural)
