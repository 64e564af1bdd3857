"""slurmctld as the power-save programs see it, recorded, for the tests of every provider."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clusterforge.powersave.slurm import NodeState


class RecordingSlurm:
    """slurmctld as the programs see it: what they told it, and the node states it answers with."""

    def __init__(self, states: dict[str, NodeState] | None = None) -> None:
        self.addresses: dict[str, str] = {}
        self.down: dict[str, str] = {}
        self.powered_down: dict[str, str] = {}
        self.powered_up: list[str] = []
        self.states = states or {}

    def set_addresses(self, addresses: Mapping[str, str]) -> None:
        self.addresses.update(addresses)

    def mark_down(self, nodes: Sequence[str], reason: str) -> None:
        self.down.update(dict.fromkeys(nodes, reason))

    def power_down(self, nodes: Sequence[str], reason: str) -> None:
        self.powered_down.update(dict.fromkeys(nodes, reason))

    def power_up(self, nodes: Sequence[str]) -> None:
        self.powered_up += nodes

    def nodes(self) -> dict[str, NodeState]:
        return self.states
