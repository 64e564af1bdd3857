"""What `update --dry-run` would do, as one document for programs (`--format json`).

The keys are fixed and always present, in this order, whatever the change: a program reads `would_apply`
and `refused` without probing for keys, and two runs on the same inputs give the same bytes (no times, no
absolute paths, numbers rounded). `format` names the shape; a change to it gets a new number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.core.hostlist import compress
from clusterforge.day2.diff import Diff
from clusterforge.day2.rolling import Batch
from clusterforge.day2.update import ACCEPT_DATA_LOSS, ACCEPT_JOB_LOSS, Settings
from clusterforge.files.paths import machine_path
from clusterforge.formats.numbers import tidy

FORMAT = "clusterforge-update-dry-run/1"


@dataclass(frozen=True)
class DryRun:
    """An update's plan: the arguments as given, the comparison, and, unless refused, the hosts changed in
    place and the rolling batches (for batches, the nodes slurmctld says run jobs are not known: at run time
    idle batches go first, so only the set of batches is certain, not their order)."""

    old: str
    new: str
    output: str
    diff: Diff
    settings: Settings
    in_place: Sequence[str] = ()
    rolling: Sequence[str] = ()
    batches: Sequence[Batch] = ()
    refused: bool = False

    def steps(self) -> list[str]:
        """The update's steps that would run, in their order (day2/update.py, Updater.run)."""
        if self.refused or not self.diff.changes:
            return []
        steps = ["retire"] if self.diff.removed else []
        if self.diff.slurm_upgrade:
            steps += ["backup", "upgrade slurmdbd", "upgrade slurmctld"]
        return steps + (["in place"] if self.in_place else []) + (["rolling"] if self.rolling else [])

    def to_dict(self) -> dict[str, Any]:
        diff = self.diff.to_dict()
        diff["physical"] = [{**delta, "old": tidy(delta["old"]), "new": tidy(delta["new"])}
                            for delta in diff["physical"]]
        return {
            "format": FORMAT,
            "old": machine_path(self.old),
            "new": machine_path(self.new),
            "output": machine_path(self.output),
            "would_apply": bool(self.diff.changes) and not self.refused,
            "refused": self._refusal(),
            "diff": diff,
            "steps": self.steps(),
            "in_place": {"count": len(self.in_place), "hosts": list(self.in_place)},
            "rolling": {"count": len(self.rolling), "hosts": list(self.rolling),
                        "batches": [{"label": b.label, "hostlist": compress(b.hosts), "hosts": list(b.hosts)}
                                    for b in self.batches]},
            "settings": {"unit": self.settings.unit, "max_fraction": tidy(self.settings.max_fraction),
                         "drain_timeout_s": tidy(self.settings.drain_timeout_s),
                         "max_failures": self.settings.max_failures,
                         "reboot_timeout_s": tidy(self.settings.reboot_timeout_s),
                         "accept_job_loss": self.settings.accept_job_loss,
                         "accept_data_loss": self.settings.accept_data_loss},
        }

    def _refusal(self) -> dict[str, Any] | None:
        """Why the update is refused: the data a change loses, else the jobs (data first: it cannot be requeued)."""
        if not self.refused:
            return None
        data = self.diff.loses_data and not self.settings.accept_data_loss
        changes = [{"file": c.file, "key": c.key, "old": c.old, "new": c.new, "daemon": c.daemon, "why": c.why}
                   for c in (self.diff.data_loss if data else self.diff.job_loss)]
        hint = (f"copy what must survive first, then run it again with {ACCEPT_DATA_LOSS}" if data else
                f"drain the cluster ({len(self.diff.interrupted)} host(s)) and empty the queue, then run it again "
                f"with {ACCEPT_JOB_LOSS}")
        return {"reason": "loses_data" if data else "loses_jobs",
                "changes": list({json_key(c): c for c in changes}.values()), "hint": hint}


def json_key(change: dict[str, Any]) -> tuple[Any, ...]:
    """A change's identity: one per key and daemon, as the text refusal lists them."""
    return tuple(change.values())
