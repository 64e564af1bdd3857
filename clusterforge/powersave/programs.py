"""The console scripts slurmctld runs: `clusterforge-resume HOSTLIST`, `clusterforge-suspend HOSTLIST`, and the
timer's `clusterforge-reconcile`.

They start fresh on every call, so they import only what they use (no click, no blueprint model). They read the
power-save file render wrote (`$CLUSTERFORGE_POWERSAVE`, default /etc/slurm/clusterforge-powersave.json) and log
one line per group of nodes to stderr, which the slurm role sends to the journal. A bad file or hostlist is
exit 2 with its location; nothing is launched then.

Each then rewrites Prometheus's file of powered-up nodes (`$CLUSTERFORGE_TARGETS`, clusterforge.powersave.targets)
from SLURM's view: suspend before it terminates, and then it waits targets.DROP_GRACE_S, so a node given back stops
being scraped before it stops answering.
A failure there is logged as an error and does not change the exit status: the nodes were launched or given back,
and slurmctld must not act on a monitoring fault; the next program call or reconcile pass writes the file again.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import time
from datetime import datetime
from pathlib import Path

from clusterforge.core import hostlist
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.powersave import config as powersave_config
from clusterforge.powersave.provider import Provider
from clusterforge.powersave.reconcile import reconcile
from clusterforge.powersave.resume import job_nodes, resume
from clusterforge.powersave.routing import Routed
from clusterforge.powersave.slurm import Scontrol
from clusterforge.powersave.suspend import suspend
from clusterforge.powersave.targets import DEFAULT_FILE as DEFAULT_TARGETS
from clusterforge.powersave.targets import DROP_GRACE_S, Refreshed, refresh

DEFAULT_FILE = "/etc/slurm/clusterforge-powersave.json"
log = logging.getLogger("clusterforge.powersave")


def _provider_class(name: str) -> type:
    """`clusterforge.targets.<name>.powersave`'s `PROVIDER`, imported only now (boto3 is needed by the EC2 provider
    alone). One this copy does not have is bad input (exit 2), not a crash."""
    try:
        found: type = importlib.import_module(f"clusterforge.targets.{name}.powersave").PROVIDER
    except (ImportError, AttributeError) as exc:
        raise ClusterforgeError(Problem(f"provider {name!r} is not available here: {exc}",
                                        os.environ.get("CLUSTERFORGE_POWERSAVE", DEFAULT_FILE),
                                        hint="the controller's copy lacks its module; re-run the slurm role")) from exc
    return found


def _made(cfg: powersave_config.PowerSaveConfig) -> Provider:
    made: Provider = _provider_class(cfg.provider)(cfg)
    return made


def provider_for(cfg: powersave_config.PowerSaveConfig) -> Provider:
    """The provider of the target the file names, or where its groups name several, one that routes each node to
    its group's (clusterforge.powersave.routing)."""
    if len(cfg.providers) == 1:
        return _made(cfg)
    return Routed(cfg, _made)


DESCRIPTIONS = {
    "clusterforge-resume": "slurmctld's ResumeProgram: give each node an instance (once; a node that has one keeps "
                           "it), tell slurmctld its address, and mark the nodes left without one DOWN with the reason. "
                           "Reads SLURM_RESUME_FILE for each job's nodes (all-or-nothing groups).",
    "clusterforge-suspend": "slurmctld's SuspendProgram: terminate the instances of the nodes powered down.",
    "clusterforge-reconcile": "The controller's timer: replace instances that failed a status check or that "
                              "remediation gave up on, terminate orphans, give nodes short of capacity back to "
                              "slurmctld after the timeout, power up static nodes.",
}


def _parser(prog: str, takes_nodes: bool) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTIONS[prog])
    if takes_nodes:
        parser.add_argument("nodes", help="SLURM hostlist, as slurmctld passes it (gpu-[0001-0016])")
    parser.add_argument("--config", type=Path, default=Path(os.environ.get("CLUSTERFORGE_POWERSAVE", DEFAULT_FILE)),
                        help="the power-save file render writes (default: %(default)s)")
    parser.add_argument("--targets", type=Path,
                        default=Path(os.environ.get("CLUSTERFORGE_TARGETS", DEFAULT_TARGETS)),
                        help="Prometheus's file of powered-up nodes this program rewrites (default: %(default)s)")
    return parser


def _targets(cfg: powersave_config.PowerSaveConfig, slurm: Scontrol, path: Path,
             leaving: list[str]) -> Refreshed | None:
    """Rewrite Prometheus's file of powered-up nodes; what it did, or None after logging why it failed."""
    try:
        return refresh(cfg, slurm, path, leaving)
    except ClusterforgeError as exc:
        for problem in exc.problems:
            log.error("targets: %s", problem.render())
        return None


def _line(done: Refreshed | None) -> str | None:
    return None if done is None else done.line


def _run(prog: str, takes_nodes: bool, argv: list[str] | None) -> int:
    logging.basicConfig(level=logging.INFO, format=f"{prog}: %(message)s", stream=sys.stderr)
    args = _parser(prog, takes_nodes).parse_args(argv)
    try:
        cfg = powersave_config.load(args.config)
        provider = provider_for(cfg)
        slurm = Scontrol()
        if prog == "clusterforge-resume":
            resume_file = os.environ.get("SLURM_RESUME_FILE")
            done = resume(cfg, provider, slurm, hostlist.expand(args.nodes),
                          job_nodes(Path(resume_file) if resume_file else None))
            lines = [*done.summary(), _line(_targets(cfg, slurm, args.targets, list(done.failed)))]
        elif prog == "clusterforge-suspend":
            nodes = hostlist.expand(args.nodes)
            written = _targets(cfg, slurm, args.targets, nodes)  # unscraped before its instance goes
            if written is not None and written.dropped:
                time.sleep(DROP_GRACE_S)  # Prometheus stops their targets first (targets.DROP_GRACE_S)
            gone = suspend(provider, nodes)
            lines = [f"suspend: terminated {len(gone)} instances for {args.nodes}", _line(written)]
        else:
            done_reconcile = reconcile(cfg, provider, slurm, datetime.now())
            lines = [*done_reconcile.summary(),
                     _line(_targets(cfg, slurm, args.targets, list(done_reconcile.replaced)))]
    except ClusterforgeError as exc:
        for problem in exc.problems:
            log.error(problem.render())
        return 2
    for line in lines:
        if line is not None:
            log.info(line)
    return 0


def resume_main(argv: list[str] | None = None) -> int:
    return _run("clusterforge-resume", True, argv)


def suspend_main(argv: list[str] | None = None) -> int:
    return _run("clusterforge-suspend", True, argv)


def reconcile_main(argv: list[str] | None = None) -> int:
    return _run("clusterforge-reconcile", False, argv)
