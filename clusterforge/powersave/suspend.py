"""Suspend: terminate the instances of the nodes slurmctld powers down.

slurmctld marks the nodes powered down itself after `SuspendTimeout`; the program only gives the instances back.
A node without an instance (never launched, or already gone) needs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.powersave.provider import Instance, Provider


def suspend(provider: Provider, nodes: Sequence[str]) -> list[Instance]:
    found = list(provider.find(nodes).values())
    if found:
        provider.terminate(found)
    return found
