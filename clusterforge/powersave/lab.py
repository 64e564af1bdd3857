"""The `lab` provider: the power-save programs on a lab controller ask the lab's power agent, on the machine that
runs the lab, to start and remove node containers (clusterforge/lab/power_agent.py), as they ask EC2 on AWS.

The agent listens on a Unix socket in a folder the lab mounts into the controller only (`SOCKET`). One request per
connection, one JSON line each way: `{"op": "launch", "group": ..., "nodes": [...], "minimum": n}`, `find`,
`terminate`, `everything`, `impaired`; the answer holds `instances` (and `failed` for a launch) or an `error`.
A container carries its node's name as a label, so the agent answers `find` from podman, as EC2 from its tags.
This module is copied to controllers (`CONTROLLER_MODULES`): the standard library only.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from typing import Any

from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Launch

NAME = "lab"  # the provider's name in the power-save file: the target whose pools the lab starts on demand
MOUNT = "/var/lib/clusterforge/lab-power"  # where the lab mounts the agent's folder into the controller
SOCKET = f"{MOUNT}/agent.sock"
TIMEOUT_S = 600.0  # a launch starts one container per node (about a second each on a small machine)
MAX_ANSWER = 16 * 1024 * 1024
OPS = ("find", "launch", "terminate", "everything", "impaired")


def instance_to_json(instance: Instance) -> dict[str, Any]:
    return {"id": instance.id, "node": instance.node, "address": instance.address, "state": instance.state}


def instance_from_json(data: Any) -> Instance:
    return Instance(str(data["id"]), str(data["node"]), None if data.get("address") is None else str(data["address"]),
                    str(data.get("state", "running")))


def ask(path: str, request: dict[str, Any], timeout: float = TIMEOUT_S) -> dict[str, Any]:
    """One request to the agent at `path`, its answer; an agent that is not there or answers an error is a
    ClusterforgeError (the program exits 2 and slurmctld's ResumeTimeout marks the nodes DOWN)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(path)
            conn.sendall(json.dumps(request).encode() + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks = []
            size = 0
            while chunk := conn.recv(65536):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_ANSWER:
                    raise ClusterforgeError(Problem("the lab's power agent answered too much", path))
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot reach the lab's power agent: {exc}", path,
                                        hint="is the lab up? `clusterforge lab status` on the lab's machine")) from exc
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError as exc:
        raise ClusterforgeError(Problem(f"the lab's power agent answered no JSON: {exc}", path)) from exc
    if not isinstance(answer, dict):
        raise ClusterforgeError(Problem("the lab's power agent answered no object", path))
    if answer.get("error"):
        raise ClusterforgeError(Problem(f"the lab's power agent refused {request.get('op')}: {answer['error']}", path))
    return answer


class LabProvider:
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
