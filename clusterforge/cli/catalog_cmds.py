"""`catalog list|show`: what hardware the planner and policies know, and where each figure comes from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from clusterforge.cli.app import app, catalog_option, format_option
from clusterforge.cli.catalog_prices_cmds import prices

if TYPE_CHECKING:
    from rich.text import Text

    from clusterforge.catalog import Catalog, Entry


@app.group("catalog")
def catalog_group() -> None:
    """Browse the catalog: hardware (servers, instance types, switches) and software sets, each with its source;
    make a region's price catalog from the cloud's own price lists (`catalog prices`)."""


catalog_group.add_command(prices)  # `catalog prices`: a region's price catalog from the cloud's own price lists


def _summary(entry: Entry) -> tuple[str, str, str, str]:
    """(gpus, power, space, network) columns for the list table."""
    from clusterforge.catalog import Instance, Nic, Server, Switch

    if isinstance(entry, Nic):  # an adapter servers name (`nics.model`): no device of its own
        return "-", "-", "-", f"{entry.ports}x {entry.port_speed_gbps}G {'/'.join(entry.protocols)}"
    if isinstance(entry, Server):
        per = f"{entry.hosts.count} {entry.hosts.name}s × " if entry.hosts else ""
        gpus = f"{per}{entry.node_gpus.count}x {entry.node_gpus.model}" if entry.node_gpus else "-"
        nics = f"{per}{entry.node_nics.compute}x {entry.node_nics.speed_gbps}G" if entry.node_nics else "-"
        return gpus, f"{entry.max_power_kw:g} kW", f"{entry.u_height}U {entry.weight_kg:g} kg", nics
    if isinstance(entry, Instance):
        acc = entry.gpus or entry.accelerators
        gpus = f"{acc.count}x {acc.model}" if acc else "-"
        return gpus, "-", "-", entry.network  # as its target's kind of instance type says it
    assert isinstance(entry, Switch)
    ports = f"{entry.ports}x {entry.port_speed_gbps}G"
    if entry.split_ports and entry.split_speed_gbps:  # what NICs at the split speed see (plan/fabric.py port_mode)
        ports += f" or {entry.split_ports}x {entry.split_speed_gbps}G"
    return "-", f"{entry.max_power_kw:g} kW", f"{entry.u_height}U {entry.weight_kg:g} kg", ports


def _shown(value: Any) -> str:
    """A figure as one line: nested groups (a rack's hosts and their GPUs) in braces, unset fields left out."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_shown(v) if not isinstance(v, dict) else '{' + _shown(v) + '}'}"
                         for k, v in value.items() if v is not None)
    return str(value)


def _cell(value: str) -> str:
    """Catalog text in a table cell: a site catalog's text is data, never rich markup nor a workflow command
    (a cell can hold `##[`, which the runner reads anywhere in a line)."""
    from rich.markup import escape

    from clusterforge.formats.escape import log_line

    return escape(log_line(value))


def _line(value: str) -> Text:
    """Catalog text on a line of its own (a title, the notes): never wrapped, so no part of it leads a line."""
    from rich.text import Text

    from clusterforge.formats.escape import log_line

    return Text(log_line(value), no_wrap=True, overflow="ellipsis")


def _as_json(key: str, entry: Entry, catalog: Catalog) -> dict[str, Any]:
    return {"key": key, "origin": catalog.origins[key], **entry.model_dump(mode="json")}


@catalog_group.command("list")
@format_option("text", "json")
@click.option("--kind", type=click.Choice(["server", "instance", "switch", "nic"]), help="Only entries of this kind.")
@catalog_option
def list_entries(fmt: str, kind: str | None, catalog: tuple[Path, ...]) -> None:
    """List every catalog key, one per row, with its headline figures."""
    from clusterforge.target_kernel import load_catalog

    cat = load_catalog(catalog)
    items = [(k, e) for k, e in cat.items() if kind is None or e.kind == kind]
    if fmt == "json":
        click.echo(json.dumps([_as_json(k, e, cat) for k, e in items], indent=2))
        return
    from rich.table import Table

    from clusterforge.cli import terminal

    table = Table(title=f"clusterforge catalog ({len(items)} entries)")
    for column in ("key", "kind", "gpus", "max power", "space / weight", "network", "description"):
        table.add_column(column, overflow="fold")
    for key, entry in items:
        # a site catalog's text is data: never rich markup
        table.add_row(_cell(key), entry.kind, *(_cell(s) for s in _summary(entry)), _cell(entry.description))
    terminal.print_table(terminal.console(), table)


@catalog_group.command("show")
@click.argument("key")
@format_option("text", "json")
@catalog_option
def show(key: str, fmt: str, catalog: tuple[Path, ...]) -> None:
    """Show every figure of the entry KEY (e.g. dgx-h100, p5.48xlarge) with its source."""
    from clusterforge.target_kernel import load_catalog

    cat = load_catalog(catalog)
    entry = cat.get(key)
    if fmt == "json":
        click.echo(json.dumps(_as_json(key, entry, cat), indent=2))
        return
    from rich.table import Table

    from clusterforge.cli import terminal

    table = Table(title=_line(f"{key}: {entry.description}"), caption=_line(f"origin: {cat.origins[key]}"))
    table.add_column("figure", overflow="fold")
    table.add_column("value", overflow="fold")
    table.add_column("source", overflow="fold")
    data = entry.model_dump(mode="json", exclude={"sources", "description", "notes"})
    for name, value in data.items():
        if value is None:
            continue
        table.add_row(name, _cell(_shown(value)), _cell(entry.sources.get(name, "")))
    console = terminal.console()
    terminal.print_table(console, table)
    if entry.notes:
        terminal.print_wrapped(console, f"notes: {entry.notes}", indent=7)


class _Tables(click.Choice[str]):
    """The software tables, the targets' own included: known once the targets are found, so read when the option
    is checked or its help shown, not when the command is registered."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from clusterforge.catalog.parts import file_model
        from clusterforge.target_kernel import catalog_parts

        tables: Any = file_model(catalog_parts()).model_fields["software"].annotation
        return tuple(tables.model_fields)

    @choices.setter
    def choices(self, value: object) -> None:
        """Click sets the choices it was given; these are always the catalog's."""


@catalog_group.command("software")
@format_option("text", "json")
@click.option("--table", "only", type=_Tables(), help="Only this table.")
@catalog_option
def software(fmt: str, only: str | None, catalog: tuple[Path, ...]) -> None:
    """List the software tables SW-001, SW-003 and SW-005 read (built-in and from --catalog), each row with its origin
    and source: releases and what they work with, the driver minimum per CUDA major, the EFA installer minimum per
    instance family, and each GPU model's architecture with its minimum driver or ROCm release.

    \b
    A site adds the sets it has qualified in its own catalog file (docs/policies.md,
    "Adding a qualified software set"):
      clusterforge catalog software --catalog site-software.yaml --table cuda
    """
    from clusterforge.target_kernel import load_catalog

    tables = load_catalog(catalog).software
    rows = [(table, row, tables.origins[table, row.key]) for table, row in tables.rows()
            if only is None or table == only]
    if fmt == "json":
        click.echo(json.dumps([{"table": t, "origin": o, **r.model_dump(mode="json")} for t, r, o in rows], indent=2))
        return
    from rich.table import Table

    from clusterforge.cli import terminal

    table = Table(title=f"software sets ({len(rows)} rows)")
    for column in ("table", "release", "works with", "origin", "source"):
        table.add_column(column, overflow="fold")
    for name, row, origin in rows:
        pairs = row.model_dump(mode="json", exclude={"source", row.KEY})
        works = ", ".join(f"{k}: {'/'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in pairs.items()
                          if v not in (None, []))
        table.add_row(name, _cell(row.key), _cell(works), _cell(origin), _cell(row.source))
    terminal.print_table(terminal.console(), table)
