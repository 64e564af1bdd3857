"""Shared by `provision` and `lab`: run a playbook with live progress, then print the summary table."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from clusterforge.cli.app import stdout_is_terminal
from clusterforge.provision.progress import Progress, summary_table
from clusterforge.provision.runner import EventHandler, Outcome


def with_progress(console: Console, action: Callable[[EventHandler], Outcome], all_rows: bool = False) -> Outcome:
    with Progress(console, live_display=stdout_is_terminal()) as progress:
        outcome = action(progress.event)
    console.print(summary_table(outcome.summary, all_rows=all_rows))
    for message, hosts in outcome.summary.skipped.items():
        shown = ", ".join(hosts[:8]) + (f" and {len(hosts) - 8} more" if len(hosts) > 8 else "")
        console.print(f"[dim]{shown}:[/dim] {message}", highlight=False)
    return outcome


def console() -> Console:
    return Console(highlight=False, width=None if stdout_is_terminal() else 140)
