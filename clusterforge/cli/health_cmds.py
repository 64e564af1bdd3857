"""`health diag`: a DCGM diagnostic of a chosen level on chosen nodes, through SLURM, with a verdict per node."""

from __future__ import annotations

import json
import shlex
import subprocess
import time

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option
from clusterforge.core.errors import ClusterforgeError, Problem


@app.group("health")
def health_group() -> None:
    """The node health check's deeper tiers, on demand.

    \b
    The periodic check (HealthCheckProgram), the prolog and the epilog run by themselves on every compute node
    (roles/health); a failing check drains the node with a reason code (docs/operations.md). These commands run
    what is too long for them:
      clusterforge health diag --level 2 --nodes gpu-[0001-0004] --ssh login-0001
      clusterforge health diag --level 3 --nodes gpu-0007 --drain --lab clusterforge
    """


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
    stdout, stderr, status = _run(argv, via, lab)
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


def _run(argv: list[str], via: str | None, lab: str | None) -> tuple[str, str, int]:
    """srun's stdout, stderr and exit status: run here, on HOST over ssh, or on a lab's controller."""
    if lab:
        from clusterforge.lab import nodes, state
        from clusterforge.lab.paths import LabPaths

        paths = LabPaths.of(lab)
        controller = state.require(paths).controller
        proc = nodes.ssh(paths, controller, argv, timeout=None)
    elif via:
        proc = subprocess.run(["ssh", "-o", "BatchMode=yes", "--", via, shlex.join(argv)], capture_output=True,
                              text=True, check=False)
    else:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        except FileNotFoundError:
            raise ClusterforgeError(Problem("srun is not installed here", "srun",
                                            hint="run on a login node, or pass --ssh LOGIN_NODE")) from None
    return proc.stdout, proc.stderr, proc.returncode
