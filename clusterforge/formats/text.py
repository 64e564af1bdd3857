"""The human view: a table grouped by row and rack with a utilisation column, then one summary line."""

from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.table import Table
from rich.text import Text

from clusterforge.errors import one_line
from clusterforge.formats.escape import log_line, plural
from clusterforge.formats.paths import report_path
from clusterforge.policies import Finding, Verdict

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def console_for_stdout() -> Console:
    """A terminal keeps its width; a CI log gets a wide table instead of 80 columns."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=150)


def _util(f: Finding) -> Text:
    share = f.utilisation
    if share is None:
        return Text("")
    style = "red" if share > 1 else "yellow" if share >= 0.8 else "green"
    return Text(f"{share:.0%}", style=style)


def print_verdict(verdict: Verdict, console: Console, files: int, show_info: bool = False) -> None:
    shown = [f for f in (*verdict.findings, *verdict.waived) if show_info or f.level != "info"]
    if shown:
        table = Table(show_lines=False, expand=False, title="clusterforge check")
        table.add_column("level", no_wrap=True)
        table.add_column("rule", no_wrap=True)
        table.add_column("where", overflow="fold", max_width=40)
        table.add_column("use", justify="right", no_wrap=True)
        table.add_column("finding", overflow="fold", ratio=1)
        ordered = sorted(shown, key=lambda f: (f.group != "cluster", f.group, f.file, f.line))
        for group, items in groupby(ordered, key=lambda f: f.group):
            table.add_section()
            table.add_row("", "", Text(one_line(group), style="bold"), "", "")
            for f in items:  # every string from the input on its own line, never read as rich markup
                level = Text("waived" if f.waiver else f.level, style="cyan" if f.waiver else _STYLE[f.level])
                message = Text(one_line(f.message))
                if f.hint:
                    message.append(f"\n→ {one_line(f.hint)}", style="dim")
                where = Text(log_line(f"{report_path(f.file)}:{f.line}"))
                table.add_row(level, Text(one_line(f.id)), where, _util(f), message)
        console.print(table)
    infos = verdict.count("info")
    hidden = f", {infos} info (--show-info)" if infos and not show_info else f", {infos} info" if infos else ""
    status = Text("FAIL" if verdict.failed else "PASS", style="bold red" if verdict.failed else "bold green")
    line = Text.assemble(status, f": {plural(verdict.count('error'), 'error')}, "
                         f"{plural(verdict.count('warning'), 'warning')}{hidden}, {len(verdict.waived)} waived — "
                         f"{plural(len(verdict.rules_run), 'rule')} over {plural(files, 'file')}")
    console.print(line)
