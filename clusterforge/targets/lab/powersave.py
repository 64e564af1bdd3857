"""Target lab's power-save provider: the programs on a lab controller ask the lab's power agent, on the machine that
runs the lab, to start and remove node containers (clusterforge/lab/power_agent.py), as they ask EC2 on AWS.

The requests and answers are the power agent's protocol (clusterforge/powersave/agent.py). A container carries its
node's name as a label, so the agent answers `find` from podman, as EC2 from its tags. This module is copied to
controllers (`clusterforge.powersave.payload`) without the rest of its target's package: it imports
only the standard library and clusterforge.powersave.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from clusterforge.powersave.agent import SOCKET, ask, instance_from_json
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Launch


class LabProvider:
    OS_PACKAGES: tuple[str, ...] = ()  # the standard library's socket and the programs' own
    CONTROLLER_FILES: tuple[str, ...] = ()

    """Node containers of the lab, through its power agent."""

    def __init__(self, config: PowerSaveConfig, path: str | None = None) -> None:
        self.config = config
        self.path = path or os.environ.get("CLUSTERFORGE_LAB_POWER", SOCKET)

    def _instances(self, request: dict[str, Any]) -> list[Instance]:
        return [instance_from_json(i) for i in ask(self.path, request).get("instances", [])]

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        return {i.node: i for i in self._instances({"op": "find", "nodes": list(nodes)})}

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        answer = ask(self.path, {"op": "launch", "group": group.name, "nodes": list(nodes), "minimum": minimum})
        instances = [instance_from_json(i) for i in answer.get("instances", [])]
        failed = {str(node): str(reason) for node, reason in dict(answer.get("failed", {})).items()}
        return Launch({i.node: i for i in instances}, failed)

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        found = self.find([i.node for i in instances])
        return {node: i.address for node, i in found.items() if i.address}

    def terminate(self, instances: Sequence[Instance]) -> None:
        if instances:
            ask(self.path, {"op": "terminate", "ids": [i.id for i in instances]})

    def everything(self) -> list[Instance]:
        return self._instances({"op": "everything"})

    def impaired(self) -> list[Instance]:
        return self._instances({"op": "impaired"})

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """None: a launch makes a new instance, so resume looks a node up with `find` first."""
        return {}


PROVIDER = LabProvider  # what the programs make for this target (clusterforge.powersave.programs.provider_for)
