"""The `health` group and `health diag`: a DCGM diagnostic of a chosen level on chosen nodes, through SLURM, with a
verdict per node. The group's other commands live in their own modules and are added to it here."""

from __future__ import annotations

import json
import time

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option
from clusterforge.cli.health_allreduce_cmds import allreduce
from clusterforge.cli.health_common import run_on_cluster
from clusterforge.cli.health_perf_cmds import perf
from clusterforge.core.errors import ClusterforgeError, Problem


@app.group("health")
def health_group() -> None:
    """The node health check's deeper tiers, on demand.

    \b
    The periodic check (HealthCheckProgram), the prolog and the epilog run by themselves on every compute node
    (roles/health); a failing check drains the node with a reason code (docs/operations.md). These commands run
    what is too long for them, or what needs the whole fleet to judge:
      clusterforge health diag --level 2 --nodes gpu-[0001-0004] --ssh login-0001
      clusterforge health diag --level 3 --nodes gpu-0007 --drain --lab clusterforge
      clusterforge health perf --nodes gpu-[00001-12500] --reservation maint --ssh login-0001 --drain
      clusterforge health allreduce --nodes gpu-[0001-0064] --pairs --min-busbw 300 --ssh login-0001
    """


health_group.add_command(perf)
health_group.add_command(allreduce)


@health_group.command("diag")
@click.option("--level", "-r", type=int, default=2, show_default=True,
              help="DCGM diagnostic level: 1 seconds, 2 about 2 min, 3 about 15 min, 4 hours (GPUs must be idle).")
@click.option("--nodes", "-w", required=True, help="Nodes as a SLURM hostlist, e.g. gpu-[0001-0004].")
@click.option("--partition", "-p", help="Partition to run in (default: the nodes' default partition).")
@click.option("--reservation", help="A maintenance reservation holding the nodes.")
@click.option("--drain", is_flag=True, help="Drain a node that fails, with reason code dcgm-diag.")
@click.option("--ssh", "via", metavar="HOST", help="Run srun on HOST (a login node) over ssh; default: here.")
@click.option("--lab", metavar="NAME", help="Run on the controller of this clusterforge lab.")
@format_option("text", "json")
def diag(level: int, nodes: str, partition: str | None, reservation: str | None, drain: bool, via: str | None,
         lab: str | None, fmt: str) -> None:
    """Run `dcgmi diag -r LEVEL` on NODES as one SLURM job (each node to itself) and report each node's verdict.

    Exit status 0 when every node passed or had nothing to diagnose (no DCGM: `skipped`), 1 when one failed or
    gave no result, 2 on bad input. Nodes without DCGM installed, such as the lab's, report `skipped`.
    """
    from clusterforge.core.hostlist import expand
    from clusterforge.operations.diag import check_level, parse, srun_command
    from clusterforge.operations.transport import check_destination, raise_for_transport

    check_level(level)
    try:
        expected = expand(nodes)
    except ClusterforgeError as error:
        raise ClusterforgeError(Problem(error.problems[0].message, path="--nodes")) from None
    if via is not None:
        check_destination(via, "--ssh")
    argv = srun_command(level, nodes, partition, reservation, drain)
    started = time.monotonic()
    stdout, stderr, status = run_on_cluster(argv, via, lab)
    verdicts = parse(stdout + stderr, expected)
    if via is not None or lab:  # ssh failing is not the nodes failing
        answered = any(v.status != "missing" for v in verdicts)
        raise_for_transport(status, stderr, answered, via or f"the controller of lab {lab}",
                            "--ssh" if via is not None else "--lab", "srun")
    elapsed = time.monotonic() - started
    failed = [v for v in verdicts if v.status in ("fail", "missing")]
    if fmt == "json":
        click.echo(json.dumps({"level": level, "nodes": [v.__dict__ for v in verdicts], "srun_exit": status,
                               "seconds": round(elapsed, 1), "ok": not failed}, indent=2))
    else:
        width = max(len(v.node) for v in verdicts)
        for v in verdicts:
            click.echo(f"{v.node:<{width}}  {v.status:<7}  {v.seconds:7.1f} s  {v.detail}")
        click.echo(f"level {level} on {len(verdicts)} nodes in {elapsed:.1f} s: "
                   f"{len(verdicts) - len(failed)} passed or skipped, {len(failed)} failed")
        if status != 0 and not failed:
            click.echo(f"srun exited {status}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_POLICY)
