"""`diff`: what changing a running cluster from one blueprint to another means for the jobs running on it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option, policy_options, say
from clusterforge.formats.escape import log_line
from clusterforge.pipeline.analysis import PolicyInputs

if TYPE_CHECKING:
    from clusterforge.cost import CostEstimate
    from clusterforge.day2.rendered import Rendered


@app.command()
@click.argument("old")
@click.argument("new")
@format_option("text", "json", "markdown")
@policy_options
def diff(old: str, new: str, fmt: str, inputs: PolicyInputs) -> None:
    """Say what changing a running cluster from blueprint OLD to blueprint NEW means for running work.

    Both are rendered in memory (nothing is written) and compared as what their files mean: every changed
    setting is listed with what applying it takes and on which hosts (slurm.conf keys as SLURM 24.11's
    slurm.conf(5) states; cloud resources, such as FSx capacity or a pool's instance type, as the provider's
    documentation states; JSON quotes the source with each change). The actions, least to most disruptive:

    \b
      NONE         nothing on running nodes (sacctmgr accounts and QOS, monitoring, a new node)
      RECONFIGURE  `scontrol reconfigure`: partitions, node lines, controllers, most slurm.conf keys
      RESTART      a daemon restarts (TCP ports, CredType, gres.conf, a SLURM upgrade): jobs keep running
      DRAIN        the node must be idle (NCCL, MPI and other libraries jobs load; a node removed)
      REBOOT       drain, apply, reboot (GPU driver, EFA, Lustre client kernel modules)
      REIMAGE      the node is replaced (other hardware, instance type, rack position); for a cloud pool
                   (its instance type, capacity reservation or block, placement group, EFA interfaces) a
                   rolling replacement: each node drained and launched again from the pool's new template
      LOSE_JOBS    queued or running jobs are lost (SelectType, SwitchType, AuthType, StateSaveLocation):
                   drain the whole cluster first; `update` applies it only with --accept-job-loss
      LOSE_DATA    stored data is lost: the provider replaces or deletes a file system (FSx for Lustre's
                   deployment type, storage type, zone, a smaller capacity); `update` needs --accept-data-loss

    OLD and NEW are each a blueprint file, a directory `clusterforge render` wrote, or REV:PATH for a
    blueprint at a git revision (read from git with the files it includes, which resolve inside its folder as
    on disk; links and submodules at the revision are refused; PATH as from the current directory). A render
    directory has no plan: its physical figures and hardware keys are not compared; it holds regular files only.
    In CI, fetch the base branch first (`git fetch origin main`, then `origin/main:cluster.yaml`).

    \b
    Examples:
      clusterforge diff cluster.yaml cluster-next.yaml
      clusterforge diff main:cluster.yaml cluster.yaml        in a pull request: what merging it does
      clusterforge diff HEAD~1:cluster.yaml cluster.yaml --format json
      clusterforge diff out/ cluster.yaml                     against what was rendered last
      clusterforge diff main:cluster.yaml cluster.yaml -f markdown > comment.md

    The text groups what repeats, as `check` does, and fits the terminal: changes with the same action, hosts
    and reason under one heading, most disruptive first; the same change on many hosts as one hostlist; racks
    that moved alike on one line. JSON lists every change and every host.

    \b
    The cost line (and `cost` in JSON) compares the estimates `clusterforge cost` makes of both sides, monthly
    and capex, when both are blueprints. --format markdown is a pull-request comment: the cost item by item
    (as `cost --diff`), then the verdict and a row per action.

    \b
    Exit codes: 0 running jobs keep running, 1 disruptive (a running node is drained, rebooted, reimaged or
    removed, or jobs or data are lost), 2 invalid input (a Site file on either side is named as one, with the
    blueprints that include it).
    """
    from clusterforge.cli.site_file import refuse_site_sides
    from clusterforge.day2.cost_delta import cost_delta
    from clusterforge.day2.diff import compare

    refuse_site_sides(old, new, "diff")
    (before, old_cost), (after, new_cost) = _rendered(old, inputs), _rendered(new, inputs)
    for name, rendered in ((old, before), (new, after)):
        if rendered.manifest_differs:
            files = ", ".join(rendered.manifest_differs[:3]) + (", ..." if len(rendered.manifest_differs) > 3 else "")
            say(f"{name}: its manifest.json classes {len(rendered.manifest_differs)} file(s) otherwise than this "
                f"version ({files}): this version's declarations are used, since its roles apply the change")
    result = compare(before, after)
    cost = cost_delta(old_cost, new_cost)
    if fmt == "json":
        body = {"old": old, "new": new, **result.to_dict(), "cost": None if cost is None else cost.to_dict()}
        click.echo(json.dumps(body, indent=2))
    elif fmt == "markdown":
        from clusterforge.day2.diff_markdown import markdown

        click.echo(markdown(old, new, result, cost), nl=False)
    else:
        from clusterforge.cli.terminal import width, wrap
        from clusterforge.day2.diff_view import report

        columns = width()
        for line, indent in report(old, new, result, cost, columns):
            for piece in wrap(log_line(line), columns, indent):
                click.echo(log_line(piece))  # keys and values are input: never a workflow command
    if result.disruptive:
        raise click.exceptions.Exit(EXIT_POLICY)


def _rendered(argument: str, inputs: PolicyInputs) -> tuple[Rendered, CostEstimate | None]:
    """A render of ARGUMENT with its cost estimate: a render directory as written (no plan, so no estimate),
    else a blueprint (a file or REV:PATH)."""
    from pathlib import Path

    from clusterforge.day2 import revisions
    from clusterforge.day2.cost_delta import rendered_with_cost
    from clusterforge.day2.rendered import Rendered

    if Path(argument).is_dir():
        return Rendered.from_directory(Path(argument)), None
    with revisions.blueprint_path(argument) as path:
        return rendered_with_cost(path, inputs)
