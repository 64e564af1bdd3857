"""`clusterforge power status|on|off|cycle NODES`: bare-metal servers through their BMCs (Redfish, IPMI)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option
from clusterforge.core.errors import ClusterforgeError, Problem


@app.command("power")
@click.argument("action", type=click.Choice(["status", "on", "off", "cycle", "inventory"]))
@click.argument("nodes")
@click.option("--bmcs", "bmcs_file", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The BMC document: each node's BMC URL (and system id where a BMC holds several), and the CA "
                   "its certificates are checked against (docs/bare-metal.md).")
@click.option("--credentials", type=click.Path(path_type=Path, dir_okay=False),
              help="A YAML file with username: and password:, mode 0600. Default: CLUSTERFORGE_BMC_USERNAME and "
                   "CLUSTERFORGE_BMC_PASSWORD from the environment.")
@click.option("--boot", type=click.Choice(["pxe"]),
              help="Set a one-time network boot before the action (the reimage path: --boot pxe cycle).")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=64, show_default=True,
              help="BMC requests in flight at once.")
@click.option("--attempts", type=click.IntRange(1, 10), default=3, show_default=True,
              help="Tries per node when its BMC does not answer or answers 5xx (1, 2, 4 s apart).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(1, 600), default=20, show_default=True,
              help="Seconds one node's request may take, whole: the few HTTP exchanges of one ask (the service root, "
                   "the system, the reset) together, however slowly its BMC answers. Each try gets its own.")
@click.option("--settle", "settle_s", type=click.FloatRange(0, 3600), default=300, show_default=True,
              help="Seconds a node's power state may take to reach the one asked for.")
@click.option("--output", "-o", "output", type=click.Path(path_type=Path, dir_okay=False),
              help="With inventory: the file to write each node's MACs to (what `render --macs` reads).")
@format_option("text", "json")
def power(action: str, nodes: str, bmcs_file: Path, credentials: Path | None, boot: str | None, concurrency: int,
          attempts: int, timeout_s: float, settle_s: float, output: Path | None, fmt: str) -> None:
    """Read or change the power of NODES (a SLURM hostlist) through their BMCs, each in the protocol the BMC
    document names for it: Redfish (https://, the default) or IPMI (ipmi://, `protocol: ipmi`).

    \b
      clusterforge power status gpu-[0001-0064] --bmcs bmcs.yaml
      clusterforge power off gpu-0007 --bmcs bmcs.yaml
      clusterforge power cycle gpu-[0001-0004] --boot pxe --bmcs bmcs.yaml    # reimage from the network
      clusterforge power status gpu-[00001-12500] --bmcs bmcs.yaml -f json > power.json
      clusterforge power inventory gpu-[0001-0064] --bmcs bmcs.yaml -o macs.yaml    # for render --macs

    `on` and `off` wait until the BMC reports the new state (`--settle`); `cycle` restarts a node that is on
    and powers on one that is off. `inventory` changes nothing: it reads each server's network interfaces (Redfish
    `EthernetInterfaces`) into -o FILE, the MACs `render --macs` binds each node's address to. Every node gets an
    answer: one whose BMC refuses the credentials, answers an error or does not answer is reported with the
    reason, and the others go on. Credentials come from the
    environment or a 0600 file (one login for the fleet, or one per hostlist: docs/bare-metal.md), never from the
    document or the command line.

    A BMC's answers are untrusted: every request stays on the node's own BMC (a link or action target elsewhere
    fails the node, and nothing is sent there), an answer over 1 MiB or not whole within --timeout fails only its
    node, and no retry happens beyond --attempts. Exit status 0 when every node did what was asked, 1 when one did
    not, 2 on bad input.
    """
    from clusterforge.bmc import credentials as creds
    from clusterforge.bmc import fleet, hosts, protocols, summary
    from clusterforge.core.hostlist import compress, expand

    try:
        names = expand(nodes)
    except ClusterforgeError as error:
        raise ClusterforgeError(Problem(error.problems[0].message, path="NODES")) from None
    targets = hosts.pick(hosts.load(bmcs_file), names, str(bmcs_file))
    if missing := protocols.missing_clients({t.protocol for t in targets}):
        raise ClusterforgeError(Problem(f"the BMC client {', '.join(missing)} is not installed", "<install>",
                                        hint="pip install 'clusterforge[bmc]'"))
    login = creds.find(credentials)
    unlogged = login.without(names)
    if unlogged:
        raise ClusterforgeError(Problem(f"{len(unlogged)} node(s) have no login in the credentials file: "
                                        f"{compress(unlogged)}", str(credentials),
                                        hint="add them under by_nodes:, or give the fleet's username: and password:"))
    plain = [t.node for t in targets if t.clear_text]
    if plain and fmt == "text":
        click.echo(f"clusterforge: {len(plain)} BMC(s) over plain http://, the login in clear text: "
                   f"{compress(plain)}", err=True)
    if action == "inventory":
        from clusterforge.cli.power_inventory import inventory, report

        with _Bar(len(targets), "power inventory", enabled=fmt == "text" and sys.stderr.isatty()) as bar:
            found = inventory(targets, login, output, (bmcs_file, credentials), concurrency, attempts, timeout_s,
                              bar.advance)
        report(found, output, len(targets), fmt)
        return
    with _Bar(len(targets), f"power {action}", enabled=fmt == "text" and sys.stderr.isatty()) as bar:
        result = fleet.run(targets, login, action, pxe_once=boot == "pxe", concurrency=concurrency,
                           attempts=attempts, timeout_s=timeout_s, settle_s=settle_s, progress=bar.advance)
    if fmt == "json":
        click.echo(json.dumps({"action": action, "boot": boot, "seconds": round(result.seconds, 2),
                               "nodes": {n: {"power": o.power, "boot": o.boot, "did": o.did, "warning": o.warning}
                                         for n, o in sorted(result.done.items())},
                               "failed": dict(sorted(result.failed.items())), "ok": result.ok}, indent=2))
    else:
        for line in summary.lines(result, action):
            click.echo(line)
    if not result.ok:
        raise click.exceptions.Exit(EXIT_POLICY)



class _Bar:
    """A progress bar on a terminal (stderr), nothing elsewhere: `advance(node)` as each node ends."""

    def __init__(self, total: int, title: str, enabled: bool) -> None:
        self.total, self.title, self.enabled = total, title, enabled
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Bar:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self.title, total=self.total)
        return self

    def advance(self, node: str) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
