"""`provision`: run site.yml against the inventory `render` wrote, with progress and a per-host summary."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from clusterforge.cli.app import EXIT_POLICY, app, say
from clusterforge.cli.run_view import console, with_progress
from clusterforge.core.errors import ClusterforgeError, Problem


@app.command()
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option("--limit", "-l", metavar="PATTERN",
              help="Only these hosts or groups, as an Ansible pattern over the names in OUT/inventory/hosts.yml: "
                   "'gpu-0001,gpu-0002', the group of a pool 'pool_gpu', the first 16 hosts of that group "
                   "'pool_gpu[0:15]', a wildcard 'gpu-00*'. Not a SLURM hostlist. A pattern matching no host is "
                   "exit 2.")
@click.option("--list-hosts", is_flag=True,
              help="Print the hosts the run would configure (after --limit), one per line; contact none.")
@click.option("--addresses", type=click.Path(path_type=Path, dir_okay=False),
              help="On-prem: a file of NAME ADDRESS lines (gpu-0001 10.1.0.11) giving each host's ansible_host; "
                   "without it Ansible connects to the names (docs/bare-metal.md).")
@click.option("--check", is_flag=True, help="Dry run: report what would change, change nothing.")
@click.option("--diff", is_flag=True, help="Show the changes to files (tasks that touch secrets show none).")
@click.option("--tags", "-t", help="Only tasks with these tags (comma-separated; e.g. install, verify).")
@click.option("--skip-tags", help="Skip tasks with these tags.")
@click.option("--extra-vars", "-e", "extra", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Extra variables YAML file (repeatable), e.g. a vault with munge_key.")
@click.option("--serial", help="Rolling change: hosts per batch (number or percentage, e.g. 10%).")
@click.option("--forks", type=click.IntRange(1, 1000), help="Parallel hosts (default from ansible.cfg: 64).")
@click.option("--fast", is_flag=True, help="Use Mitogen's strategy (several times less overhead per task).")
def provision(out: Path, limit: str | None, list_hosts: bool, addresses: Path | None, check: bool, diff: bool,
              tags: str | None, skip_tags: str | None, extra: tuple[Path, ...], serial: str | None,
              forks: int | None, fast: bool) -> None:
    """Configure the hosts of a rendered cluster: run site.yml through ansible-runner against OUT/inventory.

    \b
    Same as: ansible-playbook -i OUT/inventory/hosts.yml site.yml
    Prints per-host progress, then ok/changed/failed/unreachable per host. Failed hosts do not stop the
    others. Exit 0 when every host succeeded, 1 when any failed or was unreachable, 2 on bad input (a --limit
    that matches no host included), 130 when interrupted (Ctrl-C stops ansible-playbook and its tasks first).
    Hosts are reached at their inventory names, or at the addresses of `--addresses FILE` (docs/bare-metal.md).
    """
    from clusterforge.files.checkout import cache_root, project_root
    from clusterforge.provision.limits import ansible_reasons, listed_hosts, unmatched_limit
    from clusterforge.provision.runner import Run, execute

    inventory = out / "inventory" / "hosts.yml"
    if not inventory.is_file():
        raise ClusterforgeError(Problem("no inventory/hosts.yml here", str(out),
                                        hint="write one with `clusterforge render BLUEPRINT -o OUT`"))
    for path in extra:
        if not path.is_file():
            raise ClusterforgeError(Problem("no such file", str(path), path="--extra-vars"))
    private_dir = cache_root() / "provision" / out.resolve().name
    inventories = [inventory.resolve()]
    if addresses is not None:
        inventories.append(_addresses_inventory(addresses, inventory, private_dir))
    run = Run(project=project_root(), inventories=inventories, private_dir=private_dir, limit=limit, check=check,
              diff=diff, tags=tags, skip_tags=skip_tags, extra_vars_files=[p.resolve() for p in extra], forks=forks,
              extra_vars={"clusterforge_serial": serial} if serial else {}, fast=fast, list_hosts=list_hosts)
    if list_hosts or limit:  # a limit matching nothing is found before the run, and said with Ansible's words
        listing = execute(dataclasses.replace(run, list_hosts=True))
        if (nothing := unmatched_limit(listing.stdout, limit, str(inventory))) is not None:
            raise nothing
        for reason in ansible_reasons(listing.stdout):  # a part of the limit matched nothing: say so, go on
            say(reason)
        if list_hosts:
            if listing.rc != 0:
                raise ClusterforgeError(listing.problem("ansible-playbook --list-hosts"))
            for host in listed_hosts(listing.stdout):
                click.echo(host)
            return
    view = console()
    outcome = with_progress(view, lambda handler: execute(run, handler))
    if not outcome.summary.hosts and (nothing := unmatched_limit(outcome.stdout, limit, str(inventory))):
        raise nothing  # Ansible stopped before any host: bad input, with its reason
    if not outcome.summary.ok:
        failed = outcome.summary.failed_hosts
        view.print(f"{len(failed)} host(s) failed or unreachable: {', '.join(failed[:20])}"
                   + (" ..." if len(failed) > 20 else "") if failed
                   else f"ansible-playbook exited {outcome.rc}: {outcome.problem('the run').message}")
        raise click.exceptions.Exit(EXIT_POLICY)


def _addresses_inventory(addresses: Path, inventory: Path, private_dir: Path) -> Path:
    """The addresses, checked against the rendered names, as an inventory Ansible merges after the rendered one."""
    from clusterforge.files.atomic import write_text
    from clusterforge.provision.addresses import check_names, load, rendered_hosts
    from clusterforge.provision.addresses import inventory as addresses_inventory
    from clusterforge.render.yamlout import dump_ansible

    given = load(addresses)
    check_names(given, rendered_hosts(inventory), str(addresses), str(inventory))
    written = (private_dir / "addresses.yml").resolve()
    written.parent.mkdir(parents=True, exist_ok=True)
    write_text(written, dump_ansible(addresses_inventory(given)))
    return written
