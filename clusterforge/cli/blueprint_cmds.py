"""`validate` and `schema`: the contract of the files users write, from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_INPUT, app, catalog_option, format_option, print_problems, say
from clusterforge.core.errors import ClusterforgeError
from clusterforge.formats.escape import log_line

if TYPE_CHECKING:
    from clusterforge.catalog import Catalog
    from clusterforge.cli.validate_view import FileResult


@app.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@catalog_option
@format_option("text", "json")
def validate(files: tuple[Path, ...], catalog: tuple[Path, ...], fmt: str) -> None:
    """Check that blueprint FILES are well-formed: shape, names and hardware keys.

    Physics (power, space, cooling, fabric) is `check`'s job. Every problem prints as
    `file:line: path: message`; exit 0 when every file is valid, 2 when any is not.
    `--format json` prints one document instead: {ok, errors, files: [{file, ok, errors, cluster}]},
    each error {file, line, path, message, hint}.
    """
    from clusterforge.cli.validate_view import document
    from clusterforge.target_kernel import load_catalog

    try:
        cat = load_catalog(catalog)
    except ClusterforgeError as error:
        if fmt != "json":
            raise
        click.echo(document([], error.problems), nl=False)
        raise click.exceptions.Exit(EXIT_INPUT) from None
    results = [_validate_one(path, cat, files) for path in files]
    if fmt == "json":
        click.echo(document(results), nl=False)
    else:
        for result in results:
            _say(result)
    if any(result.problems for result in results):
        raise click.exceptions.Exit(EXIT_INPUT)


def _say(result: FileResult) -> None:
    """A file's problems on stderr as `file:line: path: message`, or that it is valid on stdout (CI's log)."""
    if result.problems:
        print_problems(ClusterforgeError(list(result.problems)))
    elif result.summary is not None:
        click.echo(log_line(f"{result.file}: valid ({result.summary.text()})"))


def _validate_one(path: Path, catalog: Catalog, given: tuple[Path, ...]) -> FileResult:
    """One blueprint's problems, or what it holds; a Site file's one problem (cli.site_file), naming the
    blueprints that include it, among `given` first."""
    from clusterforge.blueprint.load import load_blueprint
    from clusterforge.cli.site_file import site_problem
    from clusterforge.cli.validate_view import FileResult, Summary
    from clusterforge.plan.topology import hosts_per_device

    site = site_problem(path, "validate", given)
    if site is not None:
        return FileResult(str(path), (site,))
    try:
        loaded = load_blueprint(path, catalog)
    except ClusterforgeError as error:
        return FileResult(str(path), tuple(error.problems))
    cluster = loaded.cluster
    nodes = sum(p.count * hosts_per_device(loaded.catalog.get(p.hardware)) for p in cluster.pools)  # trays
    racks = len(cluster.site.racks()) if cluster.site else None
    return FileResult(str(path), summary=Summary(cluster.name, cluster.target, nodes, len(cluster.pools), racks))


@app.command()
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to a file instead of stdout.")
@catalog_option
def schema(output: Path | None, catalog: tuple[Path, ...]) -> None:
    """Print the JSON Schema of the files you write, for editor completion and validation.

    One schema for every kind, picked by the file's `kind:` (Cluster, Site, PolicyConfig, Waivers, Catalog),
    as written: name ranges, `count:` groups and `!include FILE` included. A pool's `hardware:` and a fabric's
    `switch:` take the catalog's names, so the editor completes them and marks a misspelt one: give the same
    --catalog files as to `validate` and `check`, and the schema knows your site's hardware too.
    See docs/editor.md.

    \b
    VS Code (Red Hat YAML extension):
      clusterforge schema -o clusterforge.schema.json
      clusterforge schema --catalog site-catalog.yaml -o clusterforge.schema.json
    then in settings.json:
      "yaml.schemas": {"./clusterforge.schema.json": ["*.cluster.yaml", "blueprints/*.yaml"]},
      "yaml.customTags": ["!include scalar"]
    or put this on a file's first line:
      # yaml-language-server: $schema=./clusterforge.schema.json
    """
    from clusterforge.schema import blueprint_schema
    from clusterforge.target_kernel import load_catalog

    text = json.dumps(blueprint_schema(load_catalog(catalog)), indent=2, sort_keys=True) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    from clusterforge.files.atomic import refuse_inputs, write_text

    refuse_inputs(output, catalog)  # never over a --catalog file it read
    write_text(output, text)
    say(f"wrote {output}")
