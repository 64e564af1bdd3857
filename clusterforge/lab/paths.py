"""Where the lab keeps its cache (images are in podman storage; the apt repo and keys are here) and its state."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.checkout import cache_root

PREFIX = "cf-lab"
LABEL = "io.clusterforge.lab"
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
# A lab's folder holds its secrets (the munge key, the slurmdbd password, the SSH key, the BMC login): private from
# the moment it is made, in the mode the munge role keeps the control host's key folder in (roles/munge,
# "The control host keeps the key in a private directory"), so `lab provision` after `lab up` changes nothing.
PRIVATE = 0o700


@dataclass(frozen=True)
class LabPaths:
    """Files of one named lab. Containers and the network are `<prefix>-<node>` and `<prefix>-net`."""

    name: str
    root: Path

    @classmethod
    def of(cls, name: str = PREFIX) -> LabPaths:
        if not NAME_RE.match(name):
            raise ClusterforgeError(Problem(f"invalid lab name {name!r}", path="--name",
                                            hint="lowercase letters, digits and dashes, starting with a letter"))
        return cls(name, cache_root() / "lab" / "instances" / name)

    def make(self) -> Path:
        """The lab's folder, made (or made again) private; `root`."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(PRIVATE)
        return self.root

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def render(self) -> Path:
        return self.root / "render"

    @property
    def ssh_key(self) -> Path:
        return self.root / "id_ed25519"

    @property
    def ssh_config(self) -> Path:
        return self.root / "ssh_config"

    @property
    def extra_vars(self) -> Path:
        return self.root / "lab-vars.yml"

    @property
    def repo(self) -> Path:
        """The lab's apt repository, mounted into its nodes: what its pins name, linked from the shared pool."""
        return self.root / "repo"

    @property
    def runner_dir(self) -> Path:
        return self.root / "runner"

    @property
    def facts(self) -> Path:
        return self.root / "facts"

    @property
    def network(self) -> str:
        return f"{self.name}-net"

    def container(self, node: str) -> str:
        return f"{self.name}-{node}"


def shared_cache() -> Path:
    """Cache shared by every lab: the pool of the local apt repositories and downloaded wheels."""
    return cache_root() / "lab" / "shared"
