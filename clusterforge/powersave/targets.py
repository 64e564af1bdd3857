"""Prometheus's view of the power-saved nodes: a file service discovery file (`file_sd_configs`) on the controller
that lists the nodes of each power-saved group SLURM holds powered up, written by resume, suspend and reconcile.

Why a file written here, and not EC2 or HTTP discovery: SLURM decides which nodes are powered, on every target
(EC2, a BMC, the lab's containers), and the programs already ask it; EC2 discovery would page for an instance
SLURM is giving back and know nothing of on-prem or lab nodes, and an HTTP endpoint would be one more daemon on
the controller. Prometheus watches the file and applies a change within seconds, and the monitoring role reads it
on the controller (it refuses a monitoring host that runs no power-save programs while such pools exist).

A node is a target while SLURM holds it powered and up: idle, allocated, mixed, draining, and DOWN or not
responding too (NodeDown must fire for a node SLURM believes up that does not answer). It is not a target while
powered down (`~`), powering down (`%`), powering up (`#`: its exporter cannot answer before it has booted, which
takes minutes on a GPU server, and NodeDown would page for every resumed node; ResumeTimeout owns it then), when
resume gave it no instance (DOWN with resume's reason), or while the calling program gives it back (`leaving`).
A node that comes up is added by the next reconcile pass (once a minute) or program call.

The file is O(pools): one target group per group with its nodes' names, and the group's name in a label that
starts with `__`, which Prometheus drops after relabelling. The monitoring role's relabelling turns each name into
the target's address, `instance` and `node`, and the pool's name into its place (zone, placement group), so an
elastic node's series carry the labels a static node's do and the alert rules and dashboards serve both.

Writers take turns (a lock beside the file) and each reads sinfo after taking it, so the last file written is the
freshest view: a reconcile pass that read sinfo before a suspend cannot put the suspended nodes back. The file is
replaced atomically (clusterforge.files.atomic) and only when its content changes.

Suspend waits `DROP_GRACE_S` between taking its nodes out and terminating them. Prometheus applies a changed file
after up to two 5 s tickers (its discovery manager's and its scrape manager's reload), and a target it stops keeps
its last `up` for about two scrape intervals more (its staleness markers): an instance gone before its target is
stopped shows `up == 0` for as long as that, which in the lab (NodeDown `for: 15s`, scrapes every 5 s) came within
a few seconds of paging. 6 s leaves it under 15 s, and stays below SuspendTimeout (at least 10 s), before which
slurmctld never resumes the node, so a resume cannot find the instance suspend is about to terminate.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_text
from clusterforge.powersave.config import PowerSaveConfig
from clusterforge.powersave.slurm import RESUME_PREFIX, NodeState, Slurm

DEFAULT_FILE = "/var/lib/clusterforge/targets/powered-nodes.json"  # roles/slurm and roles/monitoring: the same
POOL_LABEL = "__clusterforge_pool"  # dropped by Prometheus after relabelling: the series carry no pool label
POWER_FLAGS = ("~", "%", "#")  # powered down, powering down, powering up (sinfo's %T suffixes)
DROP_GRACE_S = 6.0


@dataclass(frozen=True)
class Refreshed:
    """What one write did: its log line, and how many of the `leaving` nodes it took out of the file."""

    line: str
    dropped: int


def is_target(state: NodeState) -> bool:
    """Whether SLURM holds this node powered and up, so that its exporters must answer."""
    if any(flag in state.state for flag in POWER_FLAGS):
        return False
    return not (state.down and state.reason.startswith(RESUME_PREFIX))  # resume gave it no instance


def groups(config: PowerSaveConfig, states: Mapping[str, NodeState], leaving: Collection[str] = ()) -> list[
        dict[str, Any]]:
    """The file's content: per group with a node powered up, its nodes' names and the group's name."""
    found = []
    for group in config.groups:
        nodes = sorted(n for n in group.members
                       if n not in leaving and (state := states.get(n)) is not None and is_target(state))
        if nodes:
            found.append({"targets": nodes, "labels": {POOL_LABEL: group.name}})
    return found


def text(found: list[dict[str, Any]]) -> str:
    return json.dumps(found, indent=1, sort_keys=True) + "\n"


def _listed(old: str | None) -> set[str] | None:
    """The nodes a previous file lists; None when there was none or it is unreadable (then any may be listed)."""
    try:
        return {str(n) for group in json.loads(old or "") for n in group["targets"]}
    except (ValueError, TypeError, KeyError):
        return None


@contextlib.contextmanager
def _turn(path: Path) -> Iterator[None]:
    """One writer at a time: a lock file beside the file, held while sinfo is read and the file written."""
    try:
        fd = os.open(path.parent / f".{path.name}.lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot lock the targets file: {exc.strerror}", str(path),
                                        hint="the slurm role creates its folder, owned by SlurmUser")) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def refresh(config: PowerSaveConfig, slurm: Slurm, path: Path, leaving: Collection[str] = ()) -> Refreshed:
    """Write the file from SLURM's view now, less `leaving`; the line the program logs."""
    gone = frozenset(leaving)
    with _turn(path):
        found = groups(config, slurm.nodes(), gone)
        content = text(found)
        try:
            previous: str | None = path.read_text(encoding="utf-8")
        except OSError:
            previous = None
        same = previous == content
        before = _listed(previous)
        dropped = 0 if same else len(gone if before is None else gone & before)
        if not same:
            old = os.umask(0o022)  # Prometheus (another user) reads it: 0644 whatever the caller's umask
            try:
                write_text(path, content)
            finally:
                os.umask(old)
    count = sum(len(g["targets"]) for g in found)
    return Refreshed(f"targets: {count} powered-up nodes in {len(found)} groups{'' if same else ' (changed)'}: "
                     f"{path}", dropped)
