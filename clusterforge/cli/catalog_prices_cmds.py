"""`catalog prices`: a price catalog for one region, made from a cloud's own published price lists.

A target reads its cloud's lists with a module `price_lists` in its package (`SUMMARY`, `HOWTO`: where the files
come from, and `price_catalog(offers, region, catalog)`), found at run time as the target packages are, so no
target is named here; `catalog_cmds` adds the command to the `catalog` group. What the target returns is a
catalog file: it is read back as `--catalog` reads one before it is written, so a file this command writes is one
`cost` and `check` accept.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

import click

from clusterforge.cli.app import catalog_option, say
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.core.hints import did_you_mean

if TYPE_CHECKING:
    from clusterforge.catalog import Catalog


class PricedCatalog(Protocol):
    """What a target's lists become: the catalog file's text, and one line for people per list read."""

    @property
    def text(self) -> str:
        ...

    @property
    def notes(self) -> tuple[str, ...]:
        ...


class PriceLists(Protocol):
    """What a target's `price_lists` module gives."""

    SUMMARY: str
    HOWTO: str

    def price_catalog(self, offers: Sequence[Path], region: str, catalog: Catalog) -> PricedCatalog:
        ...


def price_lists() -> dict[str, str]:
    """Each registered target that reads its cloud's price lists, and the module that reads them."""
    from clusterforge.target_kernel import PACKAGES, registered

    modules = {name: f"{PACKAGES}.{name}.price_lists" for name in registered()}
    return {name: module for name, module in modules.items() if importlib.util.find_spec(module) is not None}


def _lists(target: str | None) -> PriceLists:
    """The named target's reader, else the one target's that has one."""
    offered = price_lists()
    if target is None and len(offered) == 1:
        target = next(iter(offered))
    if target is None or target not in offered:
        names = list(offered) or ["none"]
        what = f"target {shown(target)} reads no price lists" if target else "several targets read price lists"
        raise ClusterforgeError(Problem(what, hint=did_you_mean(target or "", names,
                                                                "name one with --target: " + ", ".join(names))))
    return cast(PriceLists, importlib.import_module(offered[target]))


class _PricesCommand(click.Command):
    """The help ends with each target's own words on where its lists come from (read when help is shown)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        for name, module in price_lists().items():
            lists = cast(PriceLists, importlib.import_module(module))
            formatter.write_paragraph()
            formatter.write_text(f"Target {name} reads {lists.SUMMARY}.")
            formatter.write_paragraph()
            formatter.write_text(lists.HOWTO)


@click.command("prices", cls=_PricesCommand)
@click.option("--offer", "offers", multiple=True, required=True, metavar="FILE",
              type=click.Path(path_type=Path, dir_okay=False),
              help="A price list file as the cloud publishes it (repeatable: one per service, e.g. instances and "
                   "the managed file system).")
@click.option("--region", required=True, metavar="REGION",
              help="The region to price (e.g. eu-central-1): only its rows are read.")
@click.option("--target", "target", default=None, metavar="TARGET",
              help="The target whose lists FILE are; default: the one target that reads price lists.")
@click.option("--output", "-o", "output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write here (atomically) instead of standard output.")
@catalog_option
def prices(offers: tuple[Path, ...], region: str, target: str | None, output: Path | None,
           catalog: tuple[Path, ...]) -> None:
    """Write a price catalog for REGION from the cloud's own published price lists (the --offer files), to pass
    to `cost` and `check` with --catalog where the built-in table has no price for your region.

    It holds the prices of the instance types the catalog knows (yours from --catalog too) and of the managed
    file system, under `prices: regions: REGION:`, each with its source (the list, its version and publication
    date, its URL and the row) and the publication's day as its date. The lists are read as they stream: a
    region's list of several hundred MB takes a few MB of memory. Built-in prices stay for offline use: without
    --catalog, `cost` prices from them as before. One line per list on standard error says what it priced and
    what the list for REGION lacks.

    \b
    Exit codes: 0 written; 2 a file that is not a price list (FILE:LINE: message), a price the rows do not name
    one way (two rows, two prices), a list with no row for REGION, or an unreadable --catalog.
    """
    from clusterforge.catalog.parts import file_model
    from clusterforge.core.validation import validate
    from clusterforge.files.yamlsource import parse_text
    from clusterforge.target_kernel import catalog_parts, load_catalog

    if output is not None:
        from clusterforge.files.atomic import refuse_inputs

        refuse_inputs(output, [*offers, *catalog])
    made = _lists(target).price_catalog(offers, region, load_catalog(catalog))
    validate(file_model(catalog_parts()), parse_text(made.text, str(output or "<catalog prices>")))
    for note in made.notes:
        say(note)
    if output is None:
        click.echo(made.text, nl=False)
        return
    from clusterforge.files.atomic import write_text

    write_text(output, made.text)
    say(f"wrote {output}")
