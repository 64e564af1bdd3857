"""`lab up|status|exec|provision|down`: a SLURM cluster in local podman containers, provisioned by site.yml."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option
from clusterforge.cli.rolling_options import rolling_options, show_report
from clusterforge.cli.run_view import console, with_progress
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab.paths import PREFIX, LabPaths
from clusterforge.provision.runner import EventHandler, Outcome

if TYPE_CHECKING:
    from rich.console import Console

    from clusterforge.day2.update import Settings
    from clusterforge.lab.cluster import Timings
    from clusterforge.lab.state import LabState

name_option = click.option("--name", default=PREFIX, show_default=True,
                           help="Lab name: prefix of its containers and network (several labs can coexist).")


@app.group("lab")
def lab_group() -> None:
    """A multi-node SLURM cluster in local podman containers, made by the same roles as bare metal.

    \b
    clusterforge lab up             3 nodes: 1 controller + 2 compute, then `srun -N2 hostname`
    clusterforge lab status         nodes, addresses, groups
    clusterforge lab exec NODE -- sinfo
    clusterforge lab provision      re-run site.yml (a second run changes nothing)
    clusterforge lab stop NODE      power a node off (fault drills); `lab start` powers it on
    clusterforge lab replace NODE   re-image a node (a new container); `lab provision` configures it
    clusterforge lab drill NAME     inject a failure and measure detection, recovery and resume
    clusterforge lab down           remove every container, network and volume of the lab

    Needs root, podman with runc and mmdebstrap: scripts/lab-host-setup installs and configures them.
    """


def _finish(outcome: Outcome, what: str, name: str) -> None:
    if not outcome.summary.ok:
        from clusterforge.lab import cluster

        hosts = outcome.summary.hosts
        failed = ", ".join(f"{host} ({hosts[host].status})" for host in outcome.summary.failed_hosts)
        click.echo(f"{what} failed: {failed or outcome.problem('site.yml').message}", err=True)
        stopped = cluster.stopped_nodes(LabPaths.of(name))
        if stopped:
            click.echo(f"stopped: {', '.join(stopped)}: `clusterforge lab start --name {name}` powers them on",
                       err=True)
        click.echo(f"the lab stays up: fix, then `clusterforge lab provision --name {name}`, "
                   f"or remove it with `clusterforge lab down --name {name}`", err=True)
        raise click.exceptions.Exit(EXIT_POLICY)


@lab_group.command("up")
@click.option("--nodes", "-n", "count", type=click.IntRange(2, 64), help="Nodes in all (default: the blueprint's).")
@click.option("--blueprint", "-b", type=click.Path(path_type=Path, dir_okay=False),
              help="Lab blueprint (default: the bundled one, 1 controller + 2 compute).")
@click.option("--catalog", "catalogs", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Extra catalog YAML (the bundled lab-node catalog is always loaded).")
@click.option("--bare", is_flag=True, help="Start from the plain node image: every package installed by the roles.")
@click.option("--ha", is_flag=True,
              help="Add ctl-0002 as the backup controller (slurmctld's state on /shared) and db-0001 for slurmdbd.")
@click.option("--boot", type=click.Choice(["self", "push"]), default=None,
              help="self (the default): every node starts from the baked image and configures itself at boot "
                   "(site.yml's boot phase in local mode), as cloud and bare-metal nodes do; nothing runs per node "
                   "here. push (the default with --bare): site.yml over SSH from here to every node, the repair and "
                   "audit path (docs/lab.md).")
@click.option("--metal", is_flag=True,
              help="The metal lab: the compute servers are libvirt/QEMU virtual machines behind BMCs (sushy-tools, "
                   "libvirt driver) that boot the baked image over the network from the controller's provisioning "
                   "service and join SLURM, which powers them through their BMCs (default blueprint: the bundled "
                   "metal.yaml; needs scripts/metal-host-setup; minutes under software emulation).")
@rolling_options
@name_option
def up(count: int | None, blueprint: Path | None, catalogs: tuple[Path, ...], bare: bool, ha: bool,
       boot: str | None, metal: bool, name: str, settings: Settings) -> None:
    """Build the images (once), start the nodes, which configure themselves from the baked image (or, with
    --boot push, run site.yml over SSH), then run a job on every compute node.

    The cluster has SLURM 24.11 with accounting (slurmdbd and MariaDB on the controller), QOS low and high
    (high preempts low by requeue), configless compute nodes, PMIx, and /shared mounted on every node.

    On a lab that is already up, `--nodes N` grows or shrinks it as a running cluster would be: new nodes are
    provisioned and join through `scontrol reconfigure` (slurmctld is not restarted, running jobs go on);
    removed nodes are drained first and their jobs requeued after --drain-timeout.

    \b
    Examples:
      clusterforge lab up              # 1 controller and 2 compute containers, then srun on both
      clusterforge lab up --metal      # 2 virtual servers that PXE-boot the image and join SLURM"""
    from clusterforge.lab import cluster
    from clusterforge.lab.render import DEFAULT_BLUEPRINT, DEFAULT_CATALOG, METAL_BLUEPRINT, data_file
    from clusterforge.lab.state import load

    paths = LabPaths.of(name)
    if count is not None and load(paths) is not None:
        if blueprint or catalogs or bare or ha:
            raise ClusterforgeError(Problem("lab up on a running lab changes only --nodes", "--nodes",
                                            hint=f"`clusterforge lab update --blueprint B --name {name}` applies "
                                                 "another blueprint"))
        _change(name, None, count, settings)
        return
    view = console()
    started = time.monotonic()
    if metal:
        from clusterforge.cli.lab_metal import up_metal

        if count is not None or bare or ha or boot == "push":
            raise ClusterforgeError(Problem("--metal takes its servers from its blueprint and boots them itself",
                                            "--metal", hint="drop --nodes, --bare, --ha and --boot push"))
        up_metal(paths, blueprint or data_file(METAL_BLUEPRINT), catalogs, view, started)
        return
    bp = blueprint or data_file(DEFAULT_BLUEPRINT)
    lab_catalog = data_file(DEFAULT_CATALOG)
    all_catalogs = [lab_catalog, *[c for c in catalogs if c.resolve() != lab_catalog.resolve()]]
    result: list[tuple[LabState, Timings]] = []
    boot = boot or ("push" if bare else "self")  # a plain image has no boot phase: it is pushed
    if boot == "self":
        if bare:
            raise ClusterforgeError(Problem("--boot self starts from the baked image", "--bare",
                                            hint="drop --bare, or use --boot push"))
        lab, booted, timings = cluster.up_self(paths, bp, all_catalogs, count, view.print, None, ha)
        failed = [b for b in booted.values() if not b.ok]
        if failed:
            for b in failed:
                click.echo(f"{b.node}: boot phase failed at {b.step!r} (the node is DRAIN with that reason): "
                           f"`clusterforge lab exec --name {name} {b.node} -- cat /var/log/clusterforge-boot.log`",
                           err=True)
            raise click.exceptions.Exit(EXIT_POLICY)
        result.append((lab, timings))
    else:
        _finish(with_progress(view, lambda handler: _bring_up(paths, bp, all_catalogs, count, bare, view, handler,
                                                              ha, result)), "provisioning", name)
    lab, timings = result[0]
    view.print(f"== {shlex.join(cluster.smoke_job(lab)[0])}, from {lab.controller}")
    output = cluster.smoke(paths, lab)
    timings.mark("first srun")
    view.print(output.rstrip())
    steps = ", ".join(f"{step} {seconds:.1f}s" for step, seconds in timings.steps)
    view.print(f"lab {name} is up in {time.monotonic() - started:.1f}s ({steps})")
    monitoring = cluster.monitoring_urls(paths, lab)
    if monitoring:
        view.print(f"monitoring: {monitoring}")
    view.print(f"next: clusterforge lab exec {lab.controller} -- sinfo   |   clusterforge lab drill node-loss   |   "
               "clusterforge lab down")


def _bring_up(paths: LabPaths, blueprint: Path, catalogs: list[Path], count: int | None, bare: bool, view: Console,
              handler: EventHandler, ha: bool, result: list[tuple[LabState, Timings]]) -> Outcome:
    from clusterforge.lab import cluster

    lab, outcome, timings = cluster.up(paths, blueprint, catalogs, count, bare, view.print, handler, ha)
    result.append((lab, timings))
    return outcome


def _change(name: str, blueprint: Path | None, count: int | None, settings: Settings) -> None:
    """Apply a change to a running lab with live progress of each site.yml run, then the update's summary."""
    from clusterforge.cli.app import stdout_is_terminal
    from clusterforge.lab import day2
    from clusterforge.provision.progress import Progress

    view = console()
    started = time.monotonic()
    with Progress(view, live_display=stdout_is_terminal()) as progress:
        report = day2.change(LabPaths.of(name), blueprint, count, settings, view.print, progress.event)
    show_report(report, view.print)
    view.print(f"lab {name} changed in {time.monotonic() - started:.1f}s")


@lab_group.command("update")
@click.option("--blueprint", "-b", type=click.Path(path_type=Path, dir_okay=False),
              help="The lab's new blueprint (default: the one it runs).")
@click.option("--nodes", "-n", "count", type=click.IntRange(2, 64), help="Nodes in all (default: as now).")
@rolling_options
@name_option
def update(blueprint: Path | None, count: int | None, name: str, settings: Settings) -> None:
    """Apply a changed blueprint to the running lab without losing its jobs, as `clusterforge update` does for
    a real cluster: what needs no drain is applied in place; nodes whose change needs them idle (a driver or
    NCCL pin) roll in batches: drain, wait, requeue after --drain-timeout, apply, reboot if needed, health
    check, resume. Interrupted, the same command resumes.

    \b
    clusterforge lab update --blueprint my-lab.yaml --batch node --drain-timeout 60
    clusterforge diff clusterforge/lab/data/blueprint.yaml my-lab.yaml \\
        --catalog clusterforge/lab/data/catalog.yaml          (what it will do, first)
    """
    _change(name, blueprint, count, settings)


@lab_group.command("status")
@format_option("text", "json")
@name_option
def status(fmt: str, name: str) -> None:
    """Nodes of the lab with their addresses, groups and whether they run."""
    from clusterforge.lab import cluster

    info = cluster.status(LabPaths.of(name))
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"lab {info['name']} (controller {info['controller']}, network {info['network']})",
                  title_justify="left")
    for column in ("node", "address", "groups", "running", "container"):
        table.add_column(column)
    nodes = info["nodes"]
    assert isinstance(nodes, list)
    for node in nodes:
        table.add_row(node["name"], node["ip"], ", ".join(g for g in node["groups"] if g.startswith("slurm_")),
                      "yes" if node["running"] else "[red]no[/red]", node["container"])
    saved = info.get("power_saved") or []
    assert isinstance(saved, list)
    for node in saved:  # powered up and down by SLURM: not running is their normal state when idle
        table.add_row(node["name"], node["ip"], "power-saved",
                      "yes" if node["running"] else "no (powered down)", node["container"])
    console().print(table)
    agent = info.get("power_agent")
    if isinstance(agent, dict):
        said = (f"running, pid {agent['pid']}" if agent["running"]
                else "NOT running (`clusterforge lab start` starts it)")
        click.echo(f"power agent: {said} (log {agent['log']})")
        bmcs = agent.get("bmcs")
        if isinstance(bmcs, dict):
            click.echo(f"BMCs: sushy-tools emulator at {bmcs['url']} (document {bmcs['document']}, log {bmcs['log']})")
    metal_bmcs = info.get("bmcs")
    if isinstance(metal_bmcs, dict):  # the metal lab: virtual servers behind sushy-tools' libvirt driver
        click.echo(f"servers: libvirt/QEMU virtual machines (virsh list); BMCs: sushy-tools (libvirt driver) at "
                   f"{metal_bmcs['url']} (document {metal_bmcs['document']}, log {metal_bmcs['log']})")
    click.echo(f"ssh: ssh -F {info['ssh_config']} NODE")


@lab_group.command("exec", context_settings={"ignore_unknown_options": True})
@click.argument("node")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@name_option
def exec_command(node: str, command: tuple[str, ...], name: str) -> None:
    """Run COMMAND in NODE (e.g. `clusterforge lab exec ctl-0001 -- srun -N2 hostname`)."""
    from clusterforge.lab import cluster

    raise click.exceptions.Exit(cluster.exec_(LabPaths.of(name), node, list(command)))


@lab_group.command("provision")
@click.option("--check", is_flag=True, help="Dry run: report what would change.")
@click.option("--diff", is_flag=True, help="Show the changes to files (never the munge key's).")
@click.option("--tags", "-t", help="Only tasks with these tags.")
@click.option("--limit", "-l", help="Only these nodes or groups.")
@click.option("--fast/--linear", default=True, show_default=True,
              help="Mitogen's strategy (fast) or Ansible's own linear strategy, as `clusterforge provision` runs.")
@click.option("--extra-vars", "-e", "extra", multiple=True, metavar="KEY=VALUE|@FILE",
              help="Extra variable for site.yml (repeatable), e.g. -e slurm_verify_mpi=false to skip the MPI run; "
                   "@FILE reads a YAML file of them (secrets such as munge_key go there, ansible-vault "
                   "encrypted: a KEY=VALUE is kept in the run's record).")
@name_option
def provision(check: bool, diff: bool, tags: str | None, limit: str | None, fast: bool, extra: tuple[str, ...],
              name: str) -> None:
    """Run site.yml against the lab again and print the play recap (a second run changes nothing)."""
    from clusterforge.lab import cluster
    from clusterforge.provision.summary import recap

    paths = LabPaths.of(name)
    extra_vars = {}
    vars_files = []
    for item in extra:
        if item.startswith("@"):
            vars_file = Path(item[1:])
            if not vars_file.is_file():
                raise ClusterforgeError(Problem("no such file", path="--extra-vars", file=str(vars_file)))
            vars_files.append(vars_file.resolve())
            continue
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ClusterforgeError(Problem(f"expected KEY=VALUE, got {item!r}", path="--extra-vars"))
        extra_vars[key] = value
    view = console()
    stopped = cluster.stopped_nodes(paths)
    if stopped:
        view.print(f"[yellow]stopped: {', '.join(stopped)} (they will be unreachable; "
                   f"`clusterforge lab start --name {name}` powers them on)[/yellow]")
    started = time.monotonic()
    outcome = with_progress(view, lambda handler: cluster.provision(
        paths, handler, check=check, diff=diff, tags=tags, limit=limit, fast=fast, extra_vars=extra_vars,
        vars_files=vars_files))
    view.print(recap(outcome.stdout))
    view.print(f"changed={outcome.summary.changed} in {time.monotonic() - started:.1f}s")
    _finish(outcome, "provisioning", name)


@lab_group.command("stop")
@click.argument("nodes", nargs=-1, required=True)
@name_option
def stop(nodes: tuple[str, ...], name: str) -> None:
    """Power NODES off at once, as a failed server goes (fault drills: SLURM marks them down, provisioning
    reports them unreachable and finishes the rest). `lab start` powers them on again."""
    from clusterforge.lab import cluster

    for node in cluster.power(LabPaths.of(name), nodes, on=False, say=click.echo):
        click.echo(f"stopped {node}")


@lab_group.command("start")
@click.argument("nodes", nargs=-1)
@name_option
def start(nodes: tuple[str, ...], name: str) -> None:
    """Power NODES on (default: every stopped node) and wait until they have booted; their daemons start as
    after a reboot. Run `lab provision` afterwards to bring anything they missed up to date. A lab with
    power-saved pools also gets its power agent back if it is gone (after a reboot of this machine)."""
    from clusterforge.lab import cluster

    for node in cluster.power(LabPaths.of(name), nodes, on=True, say=click.echo):
        click.echo(f"started {node}")


@lab_group.command("replace")
@click.argument("node")
@name_option
def replace(node: str, name: str) -> None:
    """Re-image NODE: remove its container and start a new one from the lab's image (same name and address),
    as after a disk swap. The controller's StateSaveLocation is on a volume and is kept. `lab provision`
    makes it a member of the cluster again."""
    from clusterforge.lab import cluster

    replaced = cluster.replace(LabPaths.of(name), node)
    click.echo(f"replaced {replaced.name}: next `clusterforge lab provision --name {name}`")


@lab_group.command("down")
@click.option("--purge", is_flag=True, help="Also remove the cached images, apt repository and wheels.")
@name_option
def down(purge: bool, name: str) -> None:
    """Remove every container, network and volume the lab made, and its state."""
    from clusterforge.lab import cluster

    removed = cluster.down(LabPaths.of(name))
    if purge:
        removed += cluster.purge()
    for item in removed:
        click.echo(f"removed {item}")
    if not removed:
        click.echo(f"nothing to remove: no lab named {name}")


@lab_group.command("drill")
@click.argument("drill", metavar="DRILL", type=click.Choice(["node-loss", "gpu-fault", "exporter-down",
                                                            "controller-failover"]))
@format_option("text", "json")
@name_option
def drill(drill: str, fmt: str, name: str) -> None:
    """Inject one failure into the running lab and report what the cluster did, with times from the failure.

    \b
    node-loss            power off the node a checkpointing training job (examples/jobs) runs on: SLURM marks it
                         DOWN, requeues the job, which resumes from its checkpoint elsewhere and completes;
                         time to detect, requeue and resume, steps recomputed
    gpu-fault            an Xid 79 where the lab's health check reads the kernel log: the node is drained with
                         the reason code, the alert reaches Alertmanager, remediation reboots it, it returns
    exporter-down        stop a node exporter: NodeDown reaches Alertmanager within 2 scrapes + for:, clears
    controller-failover  (lab up --ha) power off the primary controller during a job: the backup takes over,
                         the job finishes, a new one runs, the primary takes back control

    Exit status 0 when the cluster behaved as it must, 1 when not (the failures are listed), 2 when the drill
    could not run. Every drill puts back what it broke. Expected figures follow from the lab blueprint's
    timeouts; docs/operations.md explains them.
    """
    from clusterforge.lab.drill_session import Session
    from clusterforge.lab.drills import DRILLS

    session = Session(name)
    view = console()
    if fmt == "text":
        view.print(f"drill {drill} on lab {name}: this takes a few minutes")
    result = DRILLS[drill](session)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        for at, event in result.timeline:
            view.print(f"  {at:7.1f} s  {event}")
        view.print("measured: " + ", ".join(f"{k}={v}" for k, v in result.figures.items()))
        for key, text in result.expected.items():
            view.print(f"expected {key}: {text}")
        for failure in result.failures:
            view.print(f"[red]FAILED[/red] {failure}")
        view.print(f"drill {drill}: " + ("[green]passed[/green]" if result.ok else "[red]failed[/red]"))
    if not result.ok:
        raise click.exceptions.Exit(EXIT_POLICY)
