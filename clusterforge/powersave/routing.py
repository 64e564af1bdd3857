"""Several providers behind one: a file whose groups name different targets' providers (a hybrid's on-prem pool
powered through its BMCs beside a cloud pool) is served by each provider for its own groups' nodes.

The programs (resume, suspend, reconcile) see one `Provider`; each call is split by the group each node is in and
sent to that group's provider, which was made with the file's view of its own groups only
(`PowerSaveConfig.of_provider`), so no provider is asked about another's nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Launch, Provider


class Routed:
    """A `Provider` that hands each node to its group's provider."""

    OS_PACKAGES: ClassVar[tuple[str, ...]] = ()
    CONTROLLER_FILES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: PowerSaveConfig, make: Callable[[PowerSaveConfig], Provider]) -> None:
        self.config = config
        self.providers = {name: make(config.of_provider(name)) for name in config.providers}

    def _owner(self, node: str) -> str | None:
        group = self.config.group_of(node)
        return None if group is None else self.config.provider_of(group)

    def _split(self, nodes: Sequence[str]) -> dict[str, list[str]]:
        """The nodes by the provider of their group (a node in no group is left out: no provider knows it)."""
        by: dict[str, list[str]] = {}
        for node in nodes:
            owner = self._owner(node)
            if owner is not None:
                by.setdefault(owner, []).append(node)
        return by

    def _split_instances(self, instances: Sequence[Instance]) -> dict[str, list[Instance]]:
        """Instances by their node's provider; an orphan whose node is in no group goes back to the file's own."""
        by: dict[str, list[Instance]] = {}
        for instance in instances:
            by.setdefault(self._owner(instance.node) or self.config.provider, []).append(instance)
        return by

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        found: dict[str, Instance] = {}
        for name, part in self._split(nodes).items():
            found.update(self.providers[name].find(part))
        return found

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        found: dict[str, Instance] = {}
        for name, part in self._split(nodes).items():
            found.update(self.providers[name].in_place(part))
        return found

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        return self.providers[self.config.provider_of(group)].launch(group, nodes, minimum)

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        known: dict[str, str] = {}
        for name, part in self._split_instances(instances).items():
            known.update(self.providers[name].addresses(part))
        return known

    def terminate(self, instances: Sequence[Instance]) -> None:
        for name, part in self._split_instances(instances).items():
            self.providers[name].terminate(part)

    def everything(self) -> list[Instance]:
        return [instance for provider in self.providers.values() for instance in provider.everything()]

    def impaired(self) -> list[Instance]:
        return [instance for provider in self.providers.values() for instance in provider.impaired()]
