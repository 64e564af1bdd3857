"""`affected`: which blueprints a change touches, for a CI job that checks only what a pull request changed."""

from __future__ import annotations

import os
from pathlib import Path

import click

from clusterforge.cli.app import app, say
from clusterforge.core.errors import ClusterforgeError, Problem


@app.command()
@click.argument("changed", nargs=-1, type=click.Path(path_type=Path))
@click.option("--changed-from", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Read the changed paths from FILE (`-` for stdin), one a line, or NUL-separated with -z.")
@click.option("--among", multiple=True, type=click.Path(path_type=Path), metavar="PATH",
              help="A blueprint, or a folder of them, to consider (repeatable). Default: the include root "
                   "(CLUSTERFORGE_INCLUDE_ROOT), else the current directory.")
@click.option("--among-from", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Read the paths to consider from FILE (`-` for stdin), as --changed-from.")
@click.option("--all", "everything", is_flag=True,
              help="Every Cluster considered (the policy config or the waivers changed: any verdict may).")
@click.option("-z", "--null", "null", is_flag=True,
              help="NUL-separated input files and output (file names may hold any byte but NUL).")
def affected(changed: tuple[Path, ...], changed_from: Path | None, among: tuple[Path, ...],
             among_from: Path | None, everything: bool, null: bool) -> None:
    """Print the blueprints a change touches: the ones `check` must judge.

    \b
    A Cluster blueprint is touched when it changed, or when a file it
    includes changed or was deleted: a site, a fragment of pools, at any
    depth, found with the loader's own include resolution (the same include
    root as `check`). A blueprint that cannot be parsed is touched when it
    changed, when its error lies in a changed file, or when it names a changed
    file in an `!include`: `check` then says why it cannot be read. A changed
    YAML file among those considered that no touched blueprint reads is said
    on stderr, with its kind: nothing to judge, and why.
    \b
    Exit codes: 0 (the list may be empty), 2 unreadable input.
    \b
    Examples:
      clusterforge affected sites/dc1.yaml              the teams on that site
      git diff -z --name-only origin/main HEAD > changed
      git ls-files -z -- blueprints sites > candidates
      clusterforge affected -z --changed-from changed --among-from candidates
    """
    from clusterforge.compose.affected import touched
    from clusterforge.files.yamlsource import INCLUDE_ROOT

    paths = [*changed, *(_read_list(changed_from, null) if changed_from else [])]
    considered = [*among, *(_read_list(among_from, null) if among_from else [])]
    if not considered:
        considered = [Path(os.environ.get(INCLUDE_ROOT) or ".")]
    result = touched(paths, considered, everything)
    for note in result.notes:
        say(note)
    for blueprint in result.blueprints:
        name = str(blueprint)
        if not null and "\n" in name:
            raise ClusterforgeError(Problem("a file name holds a line break", repr(name)[:80],
                                            hint="use -z for NUL-separated names"))
        click.echo(name, nl=False)
        click.echo("\0" if null else "\n", nl=False)
    say(f"{len(result.blueprints)} blueprint(s) touched")


def _read_list(source: Path, null: bool) -> list[Path]:
    """The paths a list file holds, within the input size limit; a name is kept byte for byte (surrogate
    escapes), since git prints names as they are."""
    from clusterforge.core import limits

    limit = limits.INPUT_BYTES.value
    if str(source) == "-":
        data = click.get_binary_stream("stdin").read(limit + 1)
    else:
        try:
            with open(source, "rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise ClusterforgeError(Problem(f"cannot be read: {exc.strerror or exc}", str(source))) from None
    if len(data) > limit:
        raise ClusterforgeError(limits.INPUT_BYTES.problem(f"more than {limit:,}", str(source)))
    names = data.split(b"\0" if null else b"\n")
    return [Path(os.fsdecode(name)) for name in names if name]
