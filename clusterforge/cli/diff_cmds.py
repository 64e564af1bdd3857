"""`diff`: what changing a running cluster from one blueprint to another means for the jobs running on it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option, policy_options, say
from clusterforge.core.errors import one_line
from clusterforge.formats.escape import log_line
from clusterforge.pipeline.analysis import PolicyInputs

if TYPE_CHECKING:
    from clusterforge.cost import CostEstimate
    from clusterforge.day2.cost_delta import CostDelta
    from clusterforge.day2.diff import Change, Diff, PhysicalDelta
    from clusterforge.day2.rendered import Rendered

VALUE_WIDTH = 60


@app.command()
@click.argument("old")
@click.argument("new")
@format_option("text", "json")
@policy_options
def diff(old: str, new: str, fmt: str, inputs: PolicyInputs) -> None:
    """Say what changing a running cluster from blueprint OLD to blueprint NEW means for running work.

    Both are rendered in memory (nothing is written) and compared as what their files mean: every changed
    setting is listed with what applying it takes and on which hosts, least to most disruptive (slurm.conf
    keys as SLURM 24.11's slurm.conf(5) states, the sentence quoted with each change):

    \b
      NONE         nothing on running nodes (sacctmgr accounts and QOS, monitoring, a new node)
      RECONFIGURE  `scontrol reconfigure`: partitions, node lines, controllers, most slurm.conf keys
      RESTART      a daemon restarts (TCP ports, CredType, gres.conf, a SLURM upgrade): jobs keep running
      DRAIN        the node must be idle (NCCL, MPI and other libraries jobs load; a node removed)
      REBOOT       drain, apply, reboot (GPU driver, EFA, Lustre client kernel modules)
      REIMAGE      the node is replaced (other hardware, instance type, rack position)
      LOSE_JOBS    queued or running jobs are lost (SelectType, SwitchType, AuthType, StateSaveLocation):
                   drain the whole cluster first; `update` applies it only with --accept-job-loss

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

    \b
    The cost line (and `cost` in JSON) compares the estimates `clusterforge cost` makes of both sides, monthly
    and capex, when both are blueprints.

    \b
    Exit codes: 0 running jobs keep running, 1 disruptive (a running node is drained, rebooted, reimaged or
    removed, or jobs are lost), 2 invalid input.
    """
    from clusterforge.day2.cost_delta import cost_delta
    from clusterforge.day2.diff import compare

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
    else:
        for line in report(old, new, result, cost):
            click.echo(log_line(line))  # keys and values are input: never a workflow command
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


def elided(value: str | None, width: int = VALUE_WIDTH) -> str:
    """A value on one short line: `(absent)` for none, long ones cut with '…'."""
    if value is None:
        return "(absent)"
    value = one_line(value)
    return value if len(value) <= width else value[: width - 1] + "…"


def _hosts(hosts: tuple[str, ...], daemon: str | None) -> str:
    from clusterforge.core.hostlist import compress

    if not hosts:
        return f"  ({daemon})" if daemon else ""
    count = f"{len(hosts)} host{'' if len(hosts) == 1 else 's'}"
    return f"  ({count}: {elided(compress(hosts))}{', ' + daemon if daemon else ''})"


def change_line(change: Change) -> str:
    """`ACTION  file: key: old -> new  (N hosts: hostlist, daemon)  — why`"""
    return (f"  {change.action.name:<11}  {change.file}: {elided(change.key)}: {elided(change.old)} -> "
            f"{elided(change.new)}{_hosts(change.hosts, change.daemon)}  — {change.why}")


def _number(value: float) -> str:
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def physical_line(delta: PhysicalDelta) -> str:
    """`what: old -> new unit (+delta)`"""
    change = delta.new - delta.old
    unit = f" {delta.unit}" if delta.unit else ""
    return (f"  {delta.what}: {_number(delta.old)} -> {_number(delta.new)}{unit} "
            f"({'+' if change >= 0 else '-'}{_number(abs(change))})")


def _nodes(label: str, hosts: tuple[str, ...]) -> str:
    from clusterforge.core.hostlist import compress

    return f"  {label:<8} {len(hosts)}" + (f": {elided(compress(hosts), 100)}" if hosts else "")


def verdict(result: Diff) -> str:
    if result.loses_jobs:
        keys = ", ".join(dict.fromkeys(change.key for change in result.job_loss))
        return (f"loses jobs: queued or running jobs are lost; drain the cluster first (largest action: "
                f"{result.largest.name}): {elided(keys)}")
    if not result.disruptive:
        return f"no disruption: running jobs keep running (largest action: {result.largest.name})"
    count = len(result.interrupted)
    return (f"disruptive: {count} host{' needs' if count == 1 else 's need'} a drain, reboot or reimage "
            f"(largest action: {result.largest.name})")


def report(old: str, new: str, result: Diff, cost: CostDelta | None = None) -> list[str]:
    """The text report: nodes, settings, physical figures, the cost and the verdict."""
    lines = [f"clusterforge diff: {old} -> {new}", "nodes", _nodes("added", result.added),
             _nodes("removed", result.removed), _nodes("changed", result.changed)]
    if result.powered_added or result.powered_removed:
        lines += ["power-saved nodes (SLURM starts them when jobs need them; no host to provision)",
                  _nodes("added", result.powered_added), _nodes("removed", result.powered_removed)]
    lines.append("settings")
    lines += [change_line(change) for change in result.changes] or ["  (none changed)"]
    lines += ["physical", *([physical_line(delta) for delta in result.physical] or ["  (no change)"])]
    lines.append(cost.line() if cost is not None else "cost: not compared (a render directory has no plan)")
    return [*lines, verdict(result)]
