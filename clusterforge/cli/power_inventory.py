"""`clusterforge power inventory NODES --bmcs FILE -o macs.yaml`: each server's MACs through its BMC, into the file
`render --macs` reads (clusterforge.bmc.inventory)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from clusterforge.bmc.credentials import Logins
from clusterforge.bmc.interface import NodeBmc
from clusterforge.bmc.inventory import Inventory
from clusterforge.cli.app import EXIT_POLICY
from clusterforge.core.errors import ClusterforgeError, Problem


def inventory(targets: Sequence[NodeBmc], login: Logins, output: Path | None, inputs: Sequence[Path | None],
              concurrency: int, attempts: int, timeout_s: float, progress: Callable[[str], None]) -> Inventory:
    """Read every node's interfaces and write the file atomically (the nodes that answered); -o may not be one of
    the command's `inputs` (the BMC document, the credentials)."""
    from clusterforge.bmc import inventory as nics
    from clusterforge.files.atomic import refuse_inputs, write_text

    if output is None:
        raise ClusterforgeError(Problem("inventory writes a file", path="-o", hint="give -o macs.yaml"))
    refuse_inputs(output, [path for path in inputs if path is not None])
    found = nics.read(targets, login, concurrency, attempts, timeout_s, progress=progress)
    write_text(output, nics.document(found))
    return found


def report(found: Inventory, output: Path | None, total: int, fmt: str) -> None:
    """What was read and who did not answer, grouped by reason; exit 1 when one did not."""
    from clusterforge.bmc.summary import failed_lines

    if fmt == "json":
        click.echo(json.dumps({"file": str(output), "nodes": found.nics, "failed": dict(sorted(found.failed.items())),
                               "ok": not found.failed}, indent=2))
    else:
        click.echo(f"{len(found.nics):,} of {total:,} nodes listed their network interfaces: {output}")
        for line in failed_lines(found.failed):
            click.echo(line)
    if found.failed:
        raise click.exceptions.Exit(EXIT_POLICY)
