"""The outcome of a playbook run per host, from ansible-runner's events (pure: tests feed it events)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

COUNTERS = ("ok", "changed", "failures", "dark", "skipped", "rescued", "ignored")


@dataclass
class HostResult:
    host: str
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.unreachable:
            return "unreachable"
        if self.failed:
            return "failed"
        return "changed" if self.changed else "ok"


@dataclass
class RunSummary:
    hosts: dict[str, HostResult] = field(default_factory=dict)
    finished: bool = False  # a playbook_on_stats event arrived
    # What the roles skipped and why ("skipped ..." debug messages), with the hosts that said it.
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def host(self, name: str) -> HostResult:
        return self.hosts.setdefault(name, HostResult(name))

    @property
    def changed(self) -> int:
        return sum(h.changed for h in self.hosts.values())

    @property
    def failed_hosts(self) -> list[str]:
        return sorted(h.host for h in self.hosts.values() if h.failed or h.unreachable)

    @property
    def ok(self) -> bool:
        return self.finished and not self.failed_hosts

    def totals(self) -> dict[str, int]:
        return {"hosts": len(self.hosts), "ok": sum(h.ok for h in self.hosts.values()), "changed": self.changed,
                "failed": sum(1 for h in self.hosts.values() if h.failed),
                "unreachable": sum(1 for h in self.hosts.values() if h.unreachable)}

    def add_event(self, event: Mapping[str, Any]) -> None:
        """Fold one ansible-runner event in: failures keep their message, the stats event sets the counts."""
        name = event.get("event", "")
        data = event.get("event_data") or {}
        if name in ("runner_on_failed", "runner_on_unreachable") and not data.get("ignore_errors"):
            host = data.get("host", "?")
            result = data.get("res") or {}
            message = str(result.get("msg") or result.get("stderr") or result.get("reason") or "").strip()
            task = data.get("task", "?")
            self.host(host).errors.append(f"{task}: {message.splitlines()[0] if message else 'failed'}")
        elif name == "runner_on_ok" and data.get("task_action") in ("debug", "ansible.builtin.debug"):
            note = (data.get("res") or {}).get("msg")
            if isinstance(note, str) and note.startswith("skipped"):
                self.skipped.setdefault(note, []).append(data.get("host", "?"))
        elif name == "playbook_on_stats":
            self.finished = True
            counts = {key: data.get(key) or {} for key in COUNTERS}
            for host in set().union(*(set(c) for c in counts.values())):
                result = self.host(host)
                result.ok = counts["ok"].get(host, 0)
                result.changed = counts["changed"].get(host, 0)
                result.failed = counts["failures"].get(host, 0)
                result.unreachable = counts["dark"].get(host, 0)
                result.skipped = counts["skipped"].get(host, 0)


def summarize(events: Iterable[Mapping[str, Any]]) -> RunSummary:
    summary = RunSummary()
    for event in events:
        summary.add_event(event)
    return summary


def recap(stdout: str) -> str:
    """The PLAY RECAP block of a playbook's output (empty when the run did not get that far)."""
    lines = stdout.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith("PLAY RECAP"):
            block = [lines[index]]
            for line in lines[index + 1:]:
                if not line.strip():
                    break
                block.append(line)
            return "\n".join(block)
    return ""
