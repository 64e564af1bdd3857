"""Resume: give each node slurmctld asks for an instance, once, and tell slurmctld where it is or why not.

Units of launch: with `scaling: all-or-nothing` a job's nodes in one group (from `SLURM_RESUME_FILE`) launch
together or not at all, since a job short of one node cannot start and the others would idle at full price; nodes
no job names (static nodes, `scontrol power_up`) and `best-effort` groups launch in batches that keep what EC2
gives. A node that already has a live instance is not launched again. Nodes left without one go DOWN with the
reason, and reconcile gives them back to slurmctld after `insufficient_capacity_timeout_s`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clusterforge.core import hostlist
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Provider
from clusterforge.powersave.slurm import RESUME_PREFIX, Slurm

ADDRESS_TRIES = 5


@dataclass
class Resumed:
    """What one resume did, for its log: counts and hostlists, never one line per node."""

    asked: int = 0
    already: int = 0
    launched: dict[str, Instance] = field(default_factory=dict)
    kept: dict[str, Instance] = field(default_factory=dict)  # servers a launch found already on (powered in place)
    failed: dict[str, str] = field(default_factory=dict)
    addresses: dict[str, str] = field(default_factory=dict)
    fleets: int = 0

    def summary(self) -> list[str]:
        lines = [f"resume: {self.asked} nodes asked, {self.already} already had an instance, "
                 f"{len(self.launched)} launched in {self.fleets} fleets, {len(self.addresses)} addresses set"]
        by_reason: dict[str, list[str]] = {}
        for node, reason in self.failed.items():
            by_reason.setdefault(reason, []).append(node)
        lines += [f"resume: {len(nodes)} nodes without an instance ({reason}): {hostlist.compress(nodes)}"
                  for reason, nodes in sorted(by_reason.items())]
        return lines


def job_nodes(resume_file: Path | None) -> list[list[str]]:
    """Each job's nodes to resume, from the JSON slurmctld writes (power_save.shtml: `jobs[].nodes_resume`)."""
    if resume_file is None:
        return []
    try:
        data = json.loads(resume_file.read_text(encoding="utf-8"))
        return [hostlist.expand(str(job["nodes_resume"])) for job in data.get("jobs", []) if job.get("nodes_resume")]
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ClusterforgeError(Problem(f"cannot read slurmctld's resume file: {exc}", str(resume_file))) from exc


def _units(group: NodeGroup, nodes: list[str], jobs: list[list[str]], batch: int) -> Iterator[tuple[list[str], bool]]:
    """(nodes, all-or-nothing) launch units for one group, jobs first, in the order asked."""
    left = dict.fromkeys(nodes)
    if group.scaling == "all-or-nothing":
        for job in jobs:
            unit = [n for n in job if n in left]
            for n in unit:
                del left[n]
            if unit:
                yield unit, True
    rest = list(left)
    for start in range(0, len(rest), batch):
        yield rest[start:start + batch], False


def _launch_unit(provider: Provider, group: NodeGroup, unit: list[str], together: bool, batch: int,
                 done: Resumed) -> None:
    launched: dict[str, Instance] = {}
    got_already: set[str] = set()
    for start in range(0, len(unit), batch):
        chunk = unit[start:start + batch]
        got = provider.launch(group, chunk, len(chunk) if together else 0)
        done.fleets += 1
        launched.update(got.instances)
        got_already |= got.already
        done.failed.update(got.failed)
        if together and got.failed:  # the job cannot start: give back what its other batches got
            provider.terminate(list(launched.values()))
            reason = next(iter(got.failed.values()))
            done.failed.update(dict.fromkeys(unit, reason))
            return
    kept = {node: instance for node, instance in launched.items() if node in got_already}
    done.already += len(kept)
    done.kept.update(kept)
    done.launched.update({node: instance for node, instance in launched.items() if node not in kept})


def resume(config: PowerSaveConfig, provider: Provider, slurm: Slurm, nodes: Sequence[str],
           jobs: list[list[str]] | None = None, sleep: Callable[[float], None] = time.sleep) -> Resumed:
    done = Resumed(asked=len(nodes))
    unknown = [n for n in nodes if config.group_of(n) is None]
    done.failed.update(dict.fromkeys(unknown, "not in the power-save file; re-render and reload"))
    known = [n for n in nodes if n not in unknown]
    direct = provider.in_place(known)  # a server's launch reads it first: no `find` of it beforehand
    existing = provider.find([n for n in known if n not in direct])
    done.already += len(existing)
    for group in config.groups:
        todo = [n for n in known if n in group.members and n not in existing]
        for unit, together in _units(group, todo, jobs or [], config.batch_size):
            _launch_unit(provider, group, unit, together, config.batch_size, done)
    waiting = [*existing.values(), *done.kept.values(), *done.launched.values()]
    for attempt in range(ADDRESS_TRIES):  # eventual consistency: an address may take a moment to show
        waiting = [i for i in waiting if i.node not in done.addresses]
        if not waiting:
            break
        if attempt:
            sleep(2.0 * attempt)
        done.addresses.update({i.node: i.address for i in waiting if i.address})
        done.addresses.update(provider.addresses([i for i in waiting if i.node not in done.addresses]))
    if done.addresses:
        slurm.set_addresses(done.addresses)
    by_reason: dict[str, list[str]] = {}
    for node, reason in done.failed.items():
        by_reason.setdefault(reason, []).append(node)
    for reason, failed in by_reason.items():
        slurm.mark_down(failed, f"{RESUME_PREFIX} {reason}")
    return done
