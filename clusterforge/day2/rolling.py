"""The batches of a rolling change, and the record that lets an interrupted update go on where it stopped.

A batch never splits an NVLink domain (its trays run one job together: a half-updated domain is a lost domain),
keeps a rack together when asked to (one walk to the rack, one maintenance window per rack), and takes at most
`max_fraction` of any partition it touches, so the queue keeps most of its capacity. Batches whose nodes run no
job go first: by the time a busy node is drained, the nodes its job can be requeued to are already done, so a
job is requeued once, not once per batch.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from clusterforge.accelerator_kernel import registered
from clusterforge.core.hostlist import compress, expand
from clusterforge.day2.rendered import conf_entries
from clusterforge.files.atomic import write_text
from clusterforge.render.change_classes import NAMED_LINES

Unit = Literal["node", "rack"]


@dataclass(frozen=True)
class Batch:
    hosts: tuple[str, ...]
    label: str  # "rack R01", "NVLink domain nvl-r01", "node gpu-0001"

    def __str__(self) -> str:
        return f"{self.label}: {compress(self.hosts)}"


def partitions(slurm_conf: str) -> dict[str, set[str]]:
    """Partition name -> its nodes, from a rendered slurm.conf (`Nodes=ALL` is every NodeName)."""
    conf = conf_entries(slurm_conf, NAMED_LINES)
    found: dict[str, set[str]] = {}
    for key, rest in conf.entries.items():
        kind, _, name = key.partition("=")
        if kind.lower() == "partitionname" and name.lower() != "default":
            words = dict(word.partition("=")[::2] for word in rest.split())
            nodes = words.get("Nodes", "")
            found[name] = set(conf.nodes) if nodes == "ALL" else set(expand(nodes)) if nodes else set()
    return found


def _group_key(host: str, host_vars: Mapping[str, Any], unit: Unit) -> tuple[str, bool]:
    """The batch a host belongs to, and whether that group may never be split (a vendor's scale-up domain, by the
    host variable the inventory names it with)."""
    for vendor in registered().values():
        if domain := host_vars.get(vendor.domain_var):
            return f"{vendor.domain_title} {domain}", True
    if unit == "rack" and host_vars.get("rack"):
        return f"rack {host_vars['rack']}", False
    return f"node {host}", False


def plan(hosts: Sequence[str], host_vars: Mapping[str, Mapping[str, Any]], parts: Mapping[str, set[str]],
         busy: Iterable[str], unit: Unit = "rack", max_fraction: float = 0.1) -> list[Batch]:
    """The hosts in batches, idle batches first (each group in the order its first host was given)."""
    groups: dict[str, list[str]] = {}
    whole: dict[str, bool] = {}
    for host in hosts:
        key, unsplittable = _group_key(host, host_vars.get(host, {}), unit)
        groups.setdefault(key, []).append(host)
        whole[key] = unsplittable
    batches: list[Batch] = []
    for key, members in groups.items():
        cap = _cap(members, parts, max_fraction)
        if whole[key] or len(members) <= cap:
            batches.append(Batch(tuple(members), key))
            continue
        for start in range(0, len(members), cap):
            chunk = tuple(members[start:start + cap])
            batches.append(Batch(chunk, f"{key} ({start // cap + 1}/{math.ceil(len(members) / cap)})"))
    taken = set(busy)
    return sorted(batches, key=lambda b: any(h in taken for h in b.hosts))  # stable: idle first, order kept


def _cap(members: Sequence[str], parts: Mapping[str, set[str]], max_fraction: float) -> int:
    """The most nodes of these a batch may take: `max_fraction` of the smallest partition they are in (at least
    one node: a partition of three still gets updated)."""
    sizes = [len(nodes) for nodes in parts.values() if nodes & set(members)]
    return max(1, math.floor(max_fraction * min(sizes))) if sizes else max(1, len(members))


def digest(*renders: Mapping[str, str]) -> str:
    """What an update is of: the old and new rendered files. A rerun of the same change resumes it."""
    sha = hashlib.sha256()
    for files in renders:
        for path in sorted(files):
            sha.update(path.encode() + b"\0" + files[path].encode() + b"\0")
        sha.update(b"\1")
    return sha.hexdigest()[:16]


@dataclass
class Progress:
    """Steps and hosts an update has finished, written after each (atomically): a rerun skips them."""

    path: Path
    key: str
    steps: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, key: str) -> Progress:
        """The record of this change, or a fresh one (a record of another change is replaced)."""
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return cls(path, key)
        if not isinstance(data, dict) or data.get("key") != key:
            return cls(path, key)
        return cls(path, key, [str(s) for s in data.get("steps", [])], [str(h) for h in data.get("done", [])],
                   {str(h): str(w) for h, w in (data.get("failed") or {}).items()})

    @property
    def resumed(self) -> bool:
        return bool(self.steps or self.done or self.failed)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text(self.path, json.dumps({"key": self.key, "steps": self.steps, "done": self.done,
                                          "failed": self.failed}, indent=2) + "\n")

    def step_done(self, step: str) -> None:
        self.steps.append(step)
        self.save()

    def hosts_done(self, hosts: Iterable[str]) -> None:
        self.done.extend(h for h in hosts if h not in self.done)
        self.save()

    def hosts_failed(self, failures: Mapping[str, str]) -> None:
        self.failed.update(failures)
        self.save()
