"""What a running lab is made of, written atomically so `status`, `exec` and `down` never read half a file."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_text
from clusterforge.lab.paths import LabPaths


@dataclass(frozen=True)
class Node:
    name: str  # the inventory hostname, also the container's hostname
    container: str
    ip: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class LabState:
    name: str
    blueprint: str
    catalogs: tuple[str, ...]
    image: str
    network: str
    controller: str
    nodes: tuple[Node, ...] = field(default=())
    # the nodes of power-saved pools (lab/launched.py): containers only while SLURM has them powered up
    launched: tuple[Node, ...] = field(default=())

    def node(self, name: str) -> Node:
        found = self.node_or_none(name)
        if found is not None:
            return found
        known = ", ".join(n.name for n in (*self.nodes, *self.launched))
        raise ClusterforgeError(Problem(f"no node {name!r} in lab {self.name}", hint=f"nodes: {known}"))

    def node_or_none(self, name: str) -> Node | None:
        return next((n for n in (*self.nodes, *self.launched) if name in (n.name, n.container)), None)

    def in_group(self, group: str) -> list[Node]:
        return [n for n in self.nodes if group in n.groups]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> LabState:
        data = json.loads(text)
        nodes, launched = (tuple(Node(n["name"], n["container"], n["ip"], tuple(n["groups"]))
                                 for n in data.pop(key, [])) for key in ("nodes", "launched"))
        data["catalogs"] = tuple(data["catalogs"])
        return cls(**data, nodes=nodes, launched=launched)


def save(paths: LabPaths, state: LabState) -> None:
    write_text(paths.state, state.to_json())


def load(paths: LabPaths) -> LabState | None:
    try:
        return LabState.from_json(paths.state.read_text())
    except FileNotFoundError:
        return None


def require(paths: LabPaths) -> LabState:
    state = load(paths)
    if state is None:
        raise ClusterforgeError(Problem(f"no lab named {paths.name} is up", str(paths.state),
                                        hint="start one with `clusterforge lab up`"))
    return state
