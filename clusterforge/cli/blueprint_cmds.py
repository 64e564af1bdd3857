"""`validate` and `schema`: the blueprint contract from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import click

from clusterforge.cli.app import EXIT_INPUT, app, catalog_option, print_problems, say
from clusterforge.errors import ClusterforgeError
from clusterforge.formats.escape import log_line


@app.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@catalog_option
def validate(files: tuple[Path, ...], catalog: tuple[Path, ...]) -> None:
    """Check that blueprint FILES are well-formed: shape, names and hardware keys.

    Physics (power, space, cooling, fabric) is `check`'s job. Every problem prints as
    `file:line: path: message`; exit 0 when every file is valid, 2 when any is not.
    """
    from clusterforge.catalog import load_catalog
    from clusterforge.load import load_blueprint
    from clusterforge.plan.topology import hosts_per_device

    cat = load_catalog(catalog)
    failed = False
    for path in files:
        try:
            loaded = load_blueprint(path, cat)
        except ClusterforgeError as error:
            print_problems(error)
            failed = True
            continue
        cluster = loaded.cluster
        nodes = sum(p.count * hosts_per_device(loaded.catalog.get(p.hardware)) for p in cluster.pools)  # trays
        pools = f"{len(cluster.pools)} pool{'s' if len(cluster.pools) != 1 else ''}"
        racks = f", {len(cluster.site.racks())} racks" if cluster.site else ""
        summary = f"{cluster.name}, target {cluster.target}, {nodes} nodes in {pools}{racks}"
        click.echo(log_line(f"{path}: valid ({summary})"))  # stdout is in CI's log too
    if failed:
        raise click.exceptions.Exit(EXIT_INPUT)


@app.command()
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to a file instead of stdout.")
def schema(output: Path | None) -> None:
    """Print the blueprint's JSON Schema, for editor completion and validation.

    \b
    VS Code (Red Hat YAML extension):
      clusterforge schema -o blueprint.schema.json
    then in settings.json:
      "yaml.schemas": {"./blueprint.schema.json": ["*.cluster.yaml", "blueprints/*.yaml"]}
    or put this on a blueprint's first line:
      # yaml-language-server: $schema=./blueprint.schema.json
    """
    from clusterforge.schema import blueprint_schema

    text = json.dumps(blueprint_schema(), indent=2, sort_keys=True) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    from clusterforge.atomic import write_text

    write_text(output, text)
    say(f"wrote {output}")
