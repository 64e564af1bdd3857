"""`update`: apply a blueprint change to a running cluster without losing jobs (day2/update.py)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option, input_files, policy_options
from clusterforge.cli.rolling_options import rolling_options, show_report
from clusterforge.cli.run_view import console
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.formats.escape import log_line
from clusterforge.pipeline.analysis import PolicyInputs

if TYPE_CHECKING:
    from rich.console import Console

    from clusterforge.day2.diff import Diff
    from clusterforge.day2.rendered import Rendered
    from clusterforge.day2.update import Settings, Updater
    from clusterforge.day2.update_plan import DryRun


@app.command()
@click.argument("old")
@click.argument("new", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--output", "-o", "out", required=True, type=click.Path(path_type=Path),
              help="Render directory of NEW (written as `render` would; the inventory the update runs against).")
@policy_options
@rolling_options
@click.option("--extra-vars", "-e", "extra", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Extra variables YAML file (repeatable), e.g. a vault with munge_key, as for `provision`.")
@click.option("--dry-run", is_flag=True, help="Render, show the change and the batches; change nothing.")
@click.option("--fast", is_flag=True, help="Use Mitogen's strategy for the site.yml runs.")
@format_option("text", "json")
def update(old: str, new: Path, out: Path, inputs: PolicyInputs, settings: Settings, extra: tuple[Path, ...],
           dry_run: bool, fast: bool, fmt: str) -> None:
    """Change a running cluster from blueprint OLD to NEW without losing its jobs.

    OLD is what the cluster runs: a file, or REV:PATH to read it from git (`main:cluster.yaml`). NEW is
    rendered into OUT, then applied in the order `clusterforge diff OLD NEW` gives:

    \b
    1. nodes NEW drops are drained; their jobs end or are requeued after --drain-timeout
    2. a SLURM version change: the accounting database and StateSaveLocation are backed up
       (/var/backups/clusterforge), then slurmdbd is upgraded, then slurmctld
    3. every host that needs no drain gets site.yml in place: new nodes are provisioned and join through
       `scontrol reconfigure`; partition and other slurm.conf changes reach slurmctld the same way
    4. hosts that must be idle to change (driver, NCCL, kernel modules) roll in batches: drain, wait,
       requeue, apply, reboot where needed, health check (clusterforge-health --check), resume

    A change that loses queued or running jobs (diff class LOSE_JOBS: SelectType, SwitchType, AuthType,
    StateSaveLocation, as slurm.conf(5) states) is refused, dry run included, unless --accept-job-loss says the
    cluster was drained for it; accepted, it is applied in place on every host at once. A change that loses
    stored data (diff class LOSE_DATA: FSx for Lustre replaced for another deployment type, storage type or zone, or
    shrunk, or removed) is refused the same way unless --accept-data-loss says what must survive was copied; the
    deployment (`pulumi up`) replaces the file system, not update.

    With --dry-run, `--format json` writes what would change as one document (day2/update_plan.py): the
    diff, the steps, the hosts changed in place and the rolling batches, or why it is refused.

    Interrupted or stopped by the failure budget, the same command resumes where it stopped.
    Exit 0 when every host changed, 1 when some failed (left drained, with the reason) or the change was
    refused, 2 on bad input.

    \b
    clusterforge diff main:cluster.yaml cluster.yaml          (what it means, first)
    clusterforge update main:cluster.yaml cluster.yaml -o out --batch rack --max-fraction 0.05
    clusterforge update main:cluster.yaml cluster.yaml -o out --dry-run --format json
    """
    from clusterforge.day2.diff import compare
    from clusterforge.day2.remote import AnsibleRemote, SiteApply
    from clusterforge.day2.rendered import Rendered
    from clusterforge.day2.revisions import blueprint_path
    from clusterforge.day2.rolling import Progress, digest
    from clusterforge.day2.update import Updater, data_loss_refusal, job_loss_refusal
    from clusterforge.day2.update_plan import DryRun
    from clusterforge.files.checkout import cache_root, project_root

    if fmt == "json" and not dry_run:  # a real update's output is its progress, as it happens
        raise click.BadParameter("json describes a dry run: add --dry-run", param_hint="--format")
    for path in extra:
        if not path.is_file():
            raise ClusterforgeError(Problem("no such file", str(path), path="--extra-vars"))
    view = console()
    with blueprint_path(old) as old_file:
        before = Rendered.from_blueprint(old_file, inputs)
    after = _render(new, out, inputs)
    change = compare(before, after)
    plan = DryRun(old, str(new), str(out), change, settings)
    if fmt == "text":
        _say_change(old, new, change, after, view)
    if not change.changes:  # as `lab update`: nothing to apply is not a reason to run site.yml everywhere
        _show(plan, fmt, "nothing to change: the rendered files are the same", view.print)
        return
    refusals = [*(data_loss_refusal(change) if change.loses_data and not settings.accept_data_loss else []),
                *(job_loss_refusal(change) if change.loses_jobs and not settings.accept_job_loss else [])]
    if refusals:
        for line in refusals:
            click.echo(log_line(line), err=True)  # keys and values are input
        _show(replace(plan, refused=True), fmt, "", view.print)
        raise click.exceptions.Exit(EXIT_POLICY)
    state = cache_root() / "update" / hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]
    inventory = (out / "inventory" / "hosts.yml").resolve()
    remote = AnsibleRemote(project_root(), inventory, state / "adhoc", [p.resolve() for p in extra])
    updater = Updater(change, after, remote,
                      SiteApply(project_root(), inventory, state / "runner", [p.resolve() for p in extra], fast=fast),
                      Progress.load(state / "progress.json", digest(before.files, after.files)), settings, view.print)
    if dry_run:
        _show_dry_run(plan, updater, after.hosts, fmt, view.print)
        return
    started = time.monotonic()
    show_report(updater.run(), view.print)
    view.print(f"updated in {time.monotonic() - started:.1f}s")


def _say_change(old: str, new: Path, change: Diff, after: Rendered, view: Console) -> None:
    """The change's headline, and the launched nodes update does not roll (they keep their template)."""
    from clusterforge.core.hostlist import compress
    from clusterforge.day2.update import headline, relaunched

    view.print(log_line(f"{old} -> {new}"), markup=False, emoji=False, soft_wrap=True)  # names, not markup
    view.print(headline(change))
    launched = relaunched(change, after)
    if launched:
        view.print(log_line(f"not rolled by update: {len(launched)} node(s) slurmctld launches "
                            f"({compress(launched)}) keep what they were launched with until each is drained "
                            "and launched again from the new template (docs/operations.md, Cloud resources)"),
                   markup=False)


def _show_dry_run(plan: DryRun, updater: Updater, hosts: Collection[str], fmt: str,
                  say: Callable[[str], None]) -> None:
    """What a run would do: the hosts changed in place and the rolling batches, as text or the JSON plan."""
    rolling = updater.rolling_hosts()
    batches = updater.batches(rolling, busy=()) if rolling else []
    plan = replace(plan, in_place=[h for h in hosts if h not in set(rolling)], rolling=rolling, batches=batches)
    if fmt == "json":
        _show(plan, fmt, "", say)
        return
    say(f"in place: {len(hosts) - len(rolling)} host(s); rolling: {len(rolling)} host(s)")
    for batch in batches:
        say(f"  {batch}")
    if rolling:
        say("(at run time, batches whose nodes run no job go first)")


def _show(plan: DryRun, fmt: str, text: str, say: Callable[[str], None]) -> None:
    """The plan as JSON on stdout, or `text` (if any) in the text view."""
    if fmt == "json":
        click.echo(json.dumps(plan.to_dict(), indent=2, ensure_ascii=False))
    elif text:
        say(text)


def _render(new: Path, out: Path, inputs: PolicyInputs) -> Rendered:
    """NEW written into OUT as `render` writes it, and as data with its plan (so hardware and physical changes
    are seen); refused while its policy check fails (an update never deploys a design the gate rejects)."""
    from clusterforge.cli.plan_cmds import show_policy_errors
    from clusterforge.day2.rendered import Rendered
    from clusterforge.files.atomic import refuse_inputs
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.render import RenderContext, write
    from clusterforge.target_kernel import project_dir

    result = analyze(new, read_policy(inputs))
    refuse_inputs(out, input_files([result.loaded.source], new, *inputs.files()), directory=True)
    if result.verdict.failed:
        show_policy_errors(new, result.verdict)
        click.echo("update refused: fix the design or waive the findings (--waivers)", err=True)
        raise click.exceptions.Exit(EXIT_POLICY)
    ctx = RenderContext(result.loaded, result.plan, project_dir(result.loaded.cluster))
    write(ctx, out)
    return Rendered.from_context(ctx)
