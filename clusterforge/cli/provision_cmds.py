"""`provision`: run site.yml against the inventory `render` wrote, with progress and a per-host summary."""

from __future__ import annotations

from pathlib import Path

import click

from clusterforge.cli.app import EXIT_POLICY, app
from clusterforge.cli.run_view import console, with_progress
from clusterforge.errors import ClusterforgeError, Problem


@app.command()
@click.argument("out", type=click.Path(path_type=Path, file_okay=False))
@click.option("--limit", "-l", help="Only these hosts or groups (Ansible pattern, e.g. 'gpu-00[01:16]').")
@click.option("--check", is_flag=True, help="Dry run: report what would change, change nothing.")
@click.option("--diff", is_flag=True, help="Show the changes to files (tasks that touch secrets show none).")
@click.option("--tags", "-t", help="Only tasks with these tags (comma-separated; e.g. install, verify).")
@click.option("--skip-tags", help="Skip tasks with these tags.")
@click.option("--extra-vars", "-e", "extra", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Extra variables YAML file (repeatable), e.g. a vault with munge_key.")
@click.option("--serial", help="Rolling change: hosts per batch (number or percentage, e.g. 10%).")
@click.option("--forks", type=click.IntRange(1, 1000), help="Parallel hosts (default from ansible.cfg: 64).")
@click.option("--fast", is_flag=True, help="Use Mitogen's strategy (several times less overhead per task).")
def provision(out: Path, limit: str | None, check: bool, diff: bool, tags: str | None, skip_tags: str | None,
              extra: tuple[Path, ...], serial: str | None, forks: int | None, fast: bool) -> None:
    """Configure the hosts of a rendered cluster: run site.yml through ansible-runner against OUT/inventory.

    \b
    Same as: ansible-playbook -i OUT/inventory/hosts.yml site.yml
    Prints per-host progress, then ok/changed/failed/unreachable per host. Failed hosts do not stop the
    others. Exit 0 when every host succeeded, 1 when any failed or was unreachable, 2 on bad input.
    """
    from clusterforge.checkout import cache_root, project_root
    from clusterforge.provision.runner import Run, execute

    inventory = out / "inventory" / "hosts.yml"
    if not inventory.is_file():
        raise ClusterforgeError(Problem("no inventory/hosts.yml here", str(out),
                                        hint="write one with `clusterforge render BLUEPRINT -o OUT`"))
    for path in extra:
        if not path.is_file():
            raise ClusterforgeError(Problem("no such file", str(path), path="--extra-vars"))
    run = Run(project=project_root(), inventories=[inventory.resolve()],
              private_dir=cache_root() / "provision" / out.resolve().name, limit=limit, check=check, diff=diff,
              tags=tags, skip_tags=skip_tags, extra_vars_files=[p.resolve() for p in extra], forks=forks,
              extra_vars={"clusterforge_serial": serial} if serial else {}, fast=fast)
    view = console()
    outcome = with_progress(view, lambda handler: execute(run, handler))
    if not outcome.summary.ok:
        failed = outcome.summary.failed_hosts
        view.print(f"{len(failed)} host(s) failed or unreachable: {', '.join(failed[:20])}"
                   + (" ..." if len(failed) > 20 else "") if failed else f"ansible-playbook exited {outcome.rc}")
        raise click.exceptions.Exit(EXIT_POLICY)
