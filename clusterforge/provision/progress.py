"""Per-host progress while a playbook runs, and the summary table after it.

On a terminal: a live table, one row per host (current task, ok/changed/failed counts) up to MAX_ROWS hosts,
totals beyond that. Elsewhere (CI logs): one line per task and one per failure.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from clusterforge.provision.summary import RunSummary

MAX_ROWS = 24


@dataclass
class _Host:
    task: str = ""
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: bool = False


@dataclass
class Progress:
    console: Console
    live_display: bool
    hosts: dict[str, _Host] = field(default_factory=dict)
    tasks_seen: int = 0
    started: float = field(default_factory=time.monotonic)
    _live: Live | None = None

    def __enter__(self) -> Progress:
        if self.live_display:
            self._live = Live(self._table(), console=self.console, refresh_per_second=8, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, error, tb)

    def event(self, event: Mapping[str, Any]) -> None:
        name = event.get("event", "")
        data = event.get("event_data") or {}
        host = data.get("host")
        if name == "playbook_on_task_start":
            self.tasks_seen += 1
            if not self.live_display:
                self.console.print(f"[{time.monotonic() - self.started:6.1f}s] {data.get('task', '')}", highlight=False)
        elif host:
            state = self.hosts.setdefault(host, _Host())
            if name == "runner_on_start":
                state.task = data.get("task", "")
            elif name == "runner_on_ok":
                state.ok += 1
                state.changed += bool((data.get("res") or {}).get("changed"))
            elif name == "runner_on_failed" and not data.get("ignore_errors"):
                state.failed += 1
                self._failure(host, data)
            elif name == "runner_on_unreachable":
                state.unreachable = True
                self._failure(host, data)
        if self._live is not None:
            self._live.update(self._table())

    def _failure(self, host: str, data: Mapping[str, Any]) -> None:
        result = data.get("res") or {}
        message = str(result.get("msg") or result.get("stderr") or "").strip().splitlines()
        line = f"{host}: {data.get('task', '')}: {message[0] if message else 'failed'}"
        self.console.print(f"[red]FAILED[/red] {line}", highlight=False)

    def _table(self) -> Table:
        elapsed = time.monotonic() - self.started
        table = Table(title=f"provisioning: {self.tasks_seen} tasks, {elapsed:.0f} s", title_justify="left")
        for column in ("host", "ok", "changed", "failed", "task"):
            table.add_column(column)
        rows = sorted(self.hosts.items())
        for host, state in rows[:MAX_ROWS]:
            failed = "unreachable" if state.unreachable else str(state.failed)
            table.add_row(host, str(state.ok), str(state.changed), failed, state.task)
        if len(rows) > MAX_ROWS:
            rest = [s for _, s in rows[MAX_ROWS:]]
            table.add_row(f"+{len(rest)} hosts", str(sum(s.ok for s in rest)), str(sum(s.changed for s in rest)),
                          str(sum(1 for s in rest if s.failed or s.unreachable)), "")
        return table


def summary_table(summary: RunSummary, all_rows: bool = False) -> Table:
    """ok/changed/failed/unreachable per host; with many hosts, only those that failed plus the totals."""
    table = Table(title="provisioning summary", title_justify="left")
    for column in ("host", "ok", "changed", "failed", "unreachable", "first error"):
        table.add_column(column)
    hosts = sorted(summary.hosts.values(), key=lambda h: (h.status not in ("failed", "unreachable"), h.host))
    shown = hosts if all_rows or len(hosts) <= MAX_ROWS else [h for h in hosts if h.failed or h.unreachable]
    for h in shown:
        style = "red" if h.failed or h.unreachable else ("yellow" if h.changed else "green")
        table.add_row(h.host, str(h.ok), str(h.changed), str(h.failed), str(h.unreachable),
                      h.errors[0] if h.errors else "", style=style)
    totals = summary.totals()
    table.add_row(f"all {totals['hosts']} hosts", str(totals["ok"]), str(totals["changed"]), str(totals["failed"]),
                  str(totals["unreachable"]), "", style="bold")
    return table
