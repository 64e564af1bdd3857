"""What the power-save programs tell slurmctld and read back, as scontrol and sinfo calls.

Nodes go as hostlists and in chunks, so 12,500 nodes are a few dozen calls, not 12,500. A reason is one line of
at most 250 printable characters (slurmctld keeps it in its state and shows it in sinfo). Every reason the
programs set starts with its program's name, so reconcile acts only on what they marked.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from clusterforge.core import hostlist
from clusterforge.core.errors import ClusterforgeError, Problem

RESUME_PREFIX = "clusterforge-resume:"
RECONCILE_PREFIX = "clusterforge-reconcile:"
REMEDIATION_GAVE_UP = "clusterforge-remediate: gave up"
MAX_REASON = 250
CHUNK = 500
TIMEOUT_S = 60

Runner = Callable[[list[str]], str]


@dataclass(frozen=True)
class NodeState:
    """One node as sinfo shows it: `idle~` (powered down), `alloc#` (powering up), `down*`..."""

    state: str
    reason: str = ""
    reason_at: datetime | None = None

    @property
    def powered_down(self) -> bool:
        return self.state.endswith("~")

    @property
    def powering(self) -> bool:
        return "#" in self.state or "%" in self.state

    @property
    def down(self) -> bool:
        return self.state.startswith(("down", "drain", "fail"))


class Slurm(Protocol):
    def set_addresses(self, addresses: Mapping[str, str]) -> None: ...

    def mark_down(self, nodes: Sequence[str], reason: str) -> None: ...

    def power_down(self, nodes: Sequence[str], reason: str) -> None:
        """Power down now, requeueing their jobs (POWER_DOWN_FORCE): the next resume gets a new instance."""

    def power_up(self, nodes: Sequence[str]) -> None: ...

    def nodes(self) -> dict[str, NodeState]: ...


def reason_text(text: str) -> str:
    """One printable line that fits slurmctld's reason."""
    flat = "".join(c if c.isprintable() else " " for c in " ".join(text.split()))
    return flat[:MAX_REASON]


def _chunks(nodes: Sequence[str]) -> Iterator[list[str]]:
    ordered = sorted(nodes)
    for start in range(0, len(ordered), CHUNK):
        yield ordered[start:start + CHUNK]


def run_command(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterforgeError(Problem(f"{argv[0]} failed: {exc}", argv[0])) from exc
    if done.returncode != 0:
        raise ClusterforgeError(Problem(f"{' '.join(argv[:3])} ... exited {done.returncode}: "
                                        f"{done.stderr.strip()[-300:]}", argv[0]))
    return done.stdout


def parse_sinfo(text: str) -> dict[str, NodeState]:
    """`sinfo -h -N -o '%N|%T|%H|%E'`: a node in two partitions is listed twice, the same both times."""
    found: dict[str, NodeState] = {}
    for line in text.splitlines():
        parts = line.split("|", 3)
        if len(parts) != 4 or not parts[0]:
            continue
        name, state, stamp, reason = parts
        try:
            at = datetime.fromisoformat(stamp) if stamp and stamp != "Unknown" else None
        except ValueError:
            at = None
        found[name] = NodeState(state.strip().lower(), "" if reason == "none" else reason, at)
    return found


class Scontrol:
    """The real slurmctld, through its own commands."""

    def __init__(self, run: Runner = run_command) -> None:
        self.run = run

    def set_addresses(self, addresses: Mapping[str, str]) -> None:
        for chunk in _chunks(list(addresses)):
            self.run(["scontrol", "update", f"NodeName={','.join(chunk)}",
                      f"NodeAddr={','.join(addresses[n] for n in chunk)}", f"NodeHostname={','.join(chunk)}"])

    def _update(self, nodes: Sequence[str], *fields: str) -> None:
        for chunk in _chunks(nodes):
            self.run(["scontrol", "update", f"NodeName={hostlist.compress(chunk)}", *fields])

    def mark_down(self, nodes: Sequence[str], reason: str) -> None:
        self._update(nodes, "State=DOWN", f"Reason={reason_text(reason)}")

    def power_down(self, nodes: Sequence[str], reason: str) -> None:
        self._update(nodes, "State=POWER_DOWN_FORCE", f"Reason={reason_text(reason)}")

    def power_up(self, nodes: Sequence[str]) -> None:
        self._update(nodes, "State=POWER_UP")

    def nodes(self) -> dict[str, NodeState]:
        return parse_sinfo(self.run(["sinfo", "-h", "-N", "-o", "%N|%T|%H|%E"]))
