"""The options of a rolling change, declared once for `update` and `lab update` (and `lab up` on a running lab),
and how its report is shown."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from clusterforge.cli.app import EXIT_POLICY

if TYPE_CHECKING:
    from clusterforge.day2.update import Report


def rolling_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the batch options; the command receives them as `settings: day2.update.Settings`."""

    @functools.wraps(func)
    def with_settings(*args: Any, batch_unit: str, max_fraction: float, drain_timeout: float, max_failures: int,
                      accept_job_loss: bool, accept_data_loss: bool, **kwargs: Any) -> Any:
        from clusterforge.day2.update import Settings

        settings = Settings(unit="rack" if batch_unit == "rack" else "node", max_fraction=max_fraction,
                            drain_timeout_s=drain_timeout, max_failures=max_failures, accept_job_loss=accept_job_loss,
                            accept_data_loss=accept_data_loss)
        return func(*args, settings=settings, **kwargs)

    options = (
        click.option("--batch", "batch_unit", type=click.Choice(["rack", "node"]), default="rack", show_default=True,
                     help="Nodes that change together: a rack, or single nodes (a GPU domain that spans nodes is "
                     "never split)."),
        click.option("--max-fraction", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.1,
                     show_default=True, help="At most this share of any partition is out of service at a time "
                     "(at least one node)."),
        click.option("--drain-timeout", type=click.FloatRange(0), default=600, show_default=True, metavar="SECONDS",
                     help="How long a drained batch waits for its jobs to end before they are requeued "
                     "(slurm.recovery.job_requeue; without it the batch is skipped and counted as failed)."),
        click.option("--max-failures", type=click.IntRange(0), default=0, show_default=True,
                     help="Failure budget: stop once more hosts than this failed (they stay drained)."),
        click.option("--accept-job-loss", is_flag=True,
                     help="Apply a change of diff class LOSE_JOBS (SelectType, SwitchType, AuthType, "
                     "StateSaveLocation), which loses queued or running jobs: drain the cluster and empty the queue "
                     "first. Without it such a change is refused."),
        click.option("--accept-data-loss", is_flag=True,
                     help="Apply a change of diff class LOSE_DATA (a file system the deployment replaces or deletes, "
                     "as for another deployment type or a smaller capacity), which loses every byte on it: copy what "
                     "must survive first. Without it such a change is refused."),
    )
    for option in reversed(options):
        with_settings = option(with_settings)
    return with_settings


def show_report(report: Report | None, say: Callable[[str], None]) -> None:
    """The summary line; exit 1 when a host failed."""
    if report is None:
        return
    seconds = [s for _, s in report.batches]
    hosts = sum(len(b.hosts) for b, _ in report.batches)
    per = f", {sum(seconds) / hosts:.1f}s per node" if hosts else ""
    say(f"update: {len(report.batches)} batch(es), {hosts} node(s) rolled{per}; "
        f"{len(report.requeued)} job(s) requeued ({', '.join(report.requeued) or 'none'}); "
        f"{len(report.failed)} failed" + (f" ({len(report.skipped)} host(s) done by an earlier run)"
                                          if report.skipped else ""))
    if not report.ok:
        raise click.exceptions.Exit(EXIT_POLICY)
