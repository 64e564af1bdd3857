"""Shared by `provision` and `lab`: run a playbook with live progress, then print the summary table."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from clusterforge.cli import terminal
from clusterforge.cli.app import stdout_is_terminal
from clusterforge.provision.progress import Progress, summary_table
from clusterforge.provision.runner import EventHandler, Outcome


def with_progress(console: Console, action: Callable[[EventHandler], Outcome], all_rows: bool = False) -> Outcome:
    with Progress(console, live_display=stdout_is_terminal()) as progress:
        outcome = action(progress.event)
    terminal.print_table(console, summary_table(outcome.summary, all_rows=all_rows))
    for message, hosts in outcome.summary.skipped.items():
        shown = ", ".join(hosts[:8]) + (f" and {len(hosts) - 8} more" if len(hosts) > 8 else "")
        console.print(f"[dim]{shown}:[/dim] {message}", highlight=False)
    return outcome


def console() -> Console:
    """The progress and summary console: as wide as the terminal, or cli.terminal's fixed width in a log."""
    return terminal.console(highlight=False)
