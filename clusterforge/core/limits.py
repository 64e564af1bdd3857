"""Bounds on the work one blueprint can ask for, so a hostile pull request cannot exhaust the checker.

Each limit has a default far above any real cluster and can be raised per run through an environment
variable (`CLUSTERFORGE_MAX_<NAME>`, e.g. `CLUSTERFORGE_MAX_NODES=400000`); going over one is an input problem
(exit 2) whose hint names the variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from clusterforge.core.errors import ClusterforgeError, Problem


@dataclass(frozen=True)
class Limit:
    """One bound: its name in messages, its default and the variable that raises it."""

    name: str
    default: int
    what: str

    @property
    def variable(self) -> str:
        return f"CLUSTERFORGE_MAX_{self.name.upper()}"

    @property
    def value(self) -> int:
        """The bound in force: the variable when it holds a positive whole number, else the default."""
        raw = os.environ.get(self.variable, "").strip()
        if not raw:
            return self.default
        if not raw.isdigit() or int(raw) < 1:
            raise ClusterforgeError(Problem(f"{self.variable}={raw[:40]!r} is not a positive whole number",
                                            self.variable, hint=f"unset it to use the default {self.default:,}"))
        return int(raw)

    def hint(self) -> str:
        return f"the limit is {self.value:,} {self.what}; raise it with {self.variable}=N if this is intended"

    def problem(self, found: int | str, file: str = "<input>", line: int = 0, path: str = "") -> Problem:
        """The problem to raise when `found` goes over this limit."""
        shown = f"{found:,}" if isinstance(found, int) else found
        return Problem(f"{shown} {self.what} is over the limit of {self.value:,}", file, line, path, self.hint())


INPUT_BYTES = Limit("input_bytes", 16 * 1024 * 1024, "bytes in one YAML file")
YAML_NODES = Limit("yaml_nodes", 500_000, "YAML values once aliases are expanded")
YAML_DEPTH = Limit("yaml_depth", 64, "levels of nesting")
INCLUDES = Limit("includes", 64, "included files in one blueprint")
RACKS = Limit("racks", 20_000, "racks once row and rack groups are expanded")
NODES = Limit("nodes", 100_000, "nodes in the cluster (SLURM hosts: pool counts × hosts per device)")
POOLS = Limit("pools", 1_000, "pools in one blueprint")
# The power rules judge the loss of each element with every element it feeds (physics/power_grid.py): work and
# memory grow with elements × the elements below each, so a chain of 5,000 UPSes took 29 s and 950 MB.
POWER_ELEMENTS = Limit("power_elements", 1_000, "panels and power sources in one site")

ALL: tuple[Limit, ...] = (INPUT_BYTES, YAML_NODES, YAML_DEPTH, INCLUDES, RACKS, NODES, POOLS, POWER_ELEMENTS)
