"""`health diag`: a DCGM diagnostic of a chosen level on chosen nodes, through SLURM, with a verdict per node (or
the verdicts of a run saved with --save), each failing kind ending with what to do next."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, format_option
from clusterforge.cli.health_common import (
    asked_nodes,
    check_save,
    from_option,
    from_saved,
    run_per_node,
    save_option,
)
from clusterforge.core.errors import ClusterforgeError, Problem

if TYPE_CHECKING:
    from clusterforge.operations.diag import NodeVerdict


@click.command("diag")
@click.option("--level", "-r", type=int, default=2, show_default=True,
              help="Diagnostic level: 1 seconds, 2 about 2 min, 3 about 15 min, 4 hours (GPUs must be idle).")
@click.option("--nodes", "-w", help="Nodes as a SLURM hostlist, e.g. gpu-[0001-0004] (with --from: the nodes "
              "expected in the file, those without a line are missing).")
@click.option("--partition", "-p", help="Partition to run in (default: the nodes' default partition).")
@click.option("--reservation", help="A maintenance reservation holding the nodes.")
@click.option("--drain", is_flag=True, help="Drain a node that fails, with the diagnostic's reason code "
              "(each node's own health script drains its own node).")
@from_option()
@save_option("diag")
@click.option("--ssh", "via", metavar="HOST", help="Run srun on HOST (a login node) over ssh; default: here.")
@click.option("--lab", metavar="NAME", help="Run on the controller of this clusterforge lab.")
@format_option("text", "json")
def diag(level: int, nodes: str | None, partition: str | None, reservation: str | None, drain: bool,
         saved: str | None, save: Path | None, via: str | None, lab: str | None, fmt: str) -> None:
    """Run `dcgmi diag -r LEVEL` on NODES as one SLURM job (each node to itself) and report each node's verdict.

    \b
    Each node's task prints one JSON object (the health script's `--diag LEVEL --json`); it counts only for the
    node srun ran that task on (srun --label, task N on the N-th node). A node that printed several results, one
    naming another node, or one without its status fails itself; the node it named keeps its own verdict.

    \b
    Examples:
      clusterforge health diag --level 2 --nodes gpu-[0001-0004] --ssh login-0001 --save diag.lines
      clusterforge health diag --level 3 --nodes gpu-0007 --drain --lab clusterforge
      clusterforge health diag --from diag.lines --nodes gpu-[0001-0004]

    Exit status 0 when every node passed or had nothing to diagnose (no DCGM: `skipped`), 1 when one failed or
    gave no result, 2 on bad input (a bad --from line as FILE:LINE: field: message). Nodes without DCGM installed,
    such as the lab's, report `skipped`. The text ends with what to do next for each failing kind.
    """
    from clusterforge.operations.diag import FAILED, check_level, read_output, read_saved, srun_command, with_missing
    from clusterforge.operations.srun import task_order
    from clusterforge.operations.transport import check_destination

    check_level(level)
    expected = asked_nodes(nodes, saved, "diagnose", "--nodes gpu-[0001-0004], or --from FILE to judge a saved run")
    if via is not None:
        check_destination(via, "--ssh")
    check_save(save, saved)
    started = time.monotonic()
    status: int | None = None
    if saved is not None:
        verdicts = from_saved(saved, read_saved)
        verdicts = with_missing(verdicts, expected) if expected else verdicts
        levels = {v.level for v in verdicts if v.level is not None}
        shown_level = levels.pop() if len(levels) == 1 else None
    else:
        order = task_order(expected)
        printed, status = run_per_node(srun_command(level, order, partition, reservation, drain), order, via, lab,
                                       "diag", save)
        verdicts, shown_level = with_missing(read_output(printed, order), expected), level
    if not verdicts:
        raise ClusterforgeError(Problem("no node's result in it", file=saved or "", path="--from",
                                        hint="save a run with --save FILE"))
    elapsed = time.monotonic() - started
    failed = [v for v in verdicts if v.status in FAILED]
    if fmt == "json":
        click.echo(json.dumps({"level": shown_level, "nodes": [asdict(v) for v in verdicts], "srun_exit": status,
                               "seconds": round(elapsed, 1), "ok": not failed, "next": _next(verdicts)}, indent=2))
    else:
        for line in text(verdicts, shown_level, elapsed):
            click.echo(line)
        if status and not failed:
            click.echo(f"srun exited {status}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_POLICY)


def _next(verdicts: Sequence[NodeVerdict]) -> list[dict[str, str]]:
    from clusterforge.operations.diag import FAILED
    from clusterforge.operations.next_steps import next_step

    found = {v.status for v in verdicts}
    return [{"status": s, "step": next_step("diag", s)} for s in FAILED if s in found]


def text(verdicts: Sequence[NodeVerdict], level: int | None, elapsed: float) -> list[str]:
    """A line per node, the count, then the next step of each failing kind."""
    from clusterforge.cli import terminal
    from clusterforge.operations.diag import FAILED
    from clusterforge.operations.next_steps import next_line

    width = max(len(v.node) for v in verdicts)
    lines = [f"{v.node:<{width}}  {v.status:<7}  {v.seconds:7.1f} s  {v.detail}" for v in verdicts]
    failed = sum(v.status in FAILED for v in verdicts)
    said = f"level {level}" if level is not None else "diagnostics"
    lines.append(f"{said} on {len(verdicts)} nodes in {elapsed:.1f} s: {len(verdicts) - failed} passed or skipped, "
                 f"{failed} failed")
    lines += [next_line("diag", s["status"]) for s in _next(verdicts)]
    columns = terminal.width()
    return [wrapped for line in lines for wrapped in terminal.wrap(line, columns, 6)]
