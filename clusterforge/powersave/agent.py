"""The protocol of a power agent: a process on another machine that powers nodes up and down for a provider,
asked over a Unix socket in a folder mounted into the controller only (`SOCKET`).

One request per connection, one JSON line each way: `{"op": "launch", "group": ..., "nodes": [...], "minimum": n}`,
`find`, `terminate`, `everything`, `impaired`; the answer holds `instances` (and `failed` for a launch) or an
`error`. Both ends import this module: the provider that asks (a target's power-save provider, copied to
controllers with `clusterforge.powersave.payload`: the standard library only) and the agent that answers (the lab's,
clusterforge/lab/power_agent.py, which starts node containers as EC2 starts instances).
"""

from __future__ import annotations

import json
import socket
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.powersave.provider import Instance

MOUNT = "/var/lib/clusterforge/lab-power"  # where the agent's folder is mounted into the controller
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
