"""The face every cloud shows the power-save programs: find a node's instance, launch a group's nodes, terminate.

An instance carries its node's name (a tag on EC2, a label on a lab container), so resume can look a node up before
launching it (a node resumed twice launches once) and reconcile can tell orphans from nodes. A launch reports per
node: an instance, or the reason it has none (capacity, not an error to retry at once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from clusterforge.powersave.config import NodeGroup

INSUFFICIENT_CAPACITY = "InsufficientInstanceCapacity"


@dataclass(frozen=True)
class Instance:
    id: str
    node: str
    address: str | None  # None right after launch: DescribeInstances is eventually consistent
    state: str = "running"


@dataclass
class Launch:
    """What one launch gave: instances by node, and for the nodes left without one, why (`code: message`).
    `already`: the nodes among `instances` that were running before it (a server found On, powered in place)."""

    instances: dict[str, Instance] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    already: frozenset[str] = frozenset()


class Provider(Protocol):
    """A target's power-save provider. Its class also says what a controller needs for it, which render writes
    into the power-save file for the slurm role: `OS_PACKAGES`, the Debian packages its imports need on
    /usr/bin/python3, and `CONTROLLER_FILES`, the files beside the power-save file it reads."""

    OS_PACKAGES: ClassVar[tuple[str, ...]]
    CONTROLLER_FILES: ClassVar[tuple[str, ...]]

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """The live (pending or running) instances of these nodes."""

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        """Start one instance per node, at least `minimum` of them or none (all-or-nothing when it is len(nodes))."""

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        """The private addresses now known, by node (an address not yet known is left out)."""

    def terminate(self, instances: Sequence[Instance]) -> None: ...

    def everything(self) -> list[Instance]:
        """Every live instance of this cluster, for reconcile to find orphans."""

    def impaired(self) -> list[Instance]:
        """Live instances that failed a status check."""

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """The nodes among `nodes` whose instance is their own server, powered in place, as instances, read from
        nowhere: none for a cloud, whose launch makes a new instance; each for a server behind a BMC. A launch or
        terminate of such a node reads its state first and leaves it as it is when it is already so, so resume and
        suspend ask them directly instead of `find` first: one read of each BMC per action, not two."""
