"""Suspend: terminate the instances of the nodes slurmctld powers down.

slurmctld marks the nodes powered down itself after `SuspendTimeout`; the program only gives the instances back.
A node without an instance (never launched, or already gone) needs nothing. A server powered in place is asked
directly (its power-off reads it first and leaves one already off as it is), so its BMC is read once.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.powersave.provider import Instance, Provider


def suspend(provider: Provider, nodes: Sequence[str]) -> list[Instance]:
    direct = provider.in_place(nodes)
    found = [*direct.values(), *provider.find([n for n in nodes if n not in direct]).values()]
    if found:
        provider.terminate(found)
    return found
