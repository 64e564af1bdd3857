"""The human view: one line per rule and cause (formats.grouping), errors first, then one summary line."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text

from clusterforge.core.errors import one_line
from clusterforge.formats.escape import log_line, plural
from clusterforge.formats.grouping import Group, counted, group, location, use

if TYPE_CHECKING:
    from rich.console import Console

    from clusterforge.policies import Verdict

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim", "waived": "cyan"}


def group_lines(g: Group) -> list[str]:
    """`WARNING PWR-002 ×4,167 racks r000k[00-23],…(+4,119 more) (hall.yaml:25, …; 99%): message`, then
    `→ hint` on its own line: each a line a CI log cannot read as a workflow command (escape.log_line)."""
    where = "; ".join(part for part in (location(g), use(g)) if part)
    message = g.message + (f" — waived: {g.reason}" if g.waived else "")
    lines = [f"{g.label.upper():<7} {g.rule} {counted(g)}{f' ({where})' if where else ''}: {message}"]
    if g.hint:
        lines.append(f"        → {g.hint}")
    return [log_line(line) for line in lines]


Fit = Callable[[str, int], list[str]]  # (line, indent of its continuation lines) -> the lines a screen shows


def print_verdict(verdict: Verdict, console: Console, files: int, show_info: bool = False,
                  fit: Fit | None = None) -> None:
    """Every group of findings, most severe first, then `FAIL: 1 error, …`. The report is printed in one piece;
    rich never wraps it (a line it wrapped could start with what a CI runner reads as a command, and could cut a
    `file:line` in two). `fit`, when given, breaks each line for the screen instead (cli.terminal.wrap: at spaces,
    a location never cut, continuation lines indented under the rule); each piece is made a safe log line again.
    Every string from the input is plain text, never read as rich markup."""
    lines: list[str] = []
    styles: list[tuple[int, int, str]] = []
    at = 0

    def add(line: str, indent: int, style: str, styled: int | None) -> None:
        """`line` as its pieces; `styled` characters of the first piece (all of each piece when None) get `style`."""
        nonlocal at
        for i, piece in enumerate(fit(line, indent) if fit else [line]):
            piece = log_line(piece) if i else piece
            if style and (styled is None or i == 0):
                styles.append((at, at + (len(piece) if styled is None else styled), style))
            lines.append(piece)
            at += len(piece) + 1

    for g in group(verdict, show_info):
        for i, line in enumerate(group_lines(g)):
            if i == 0:
                add(line, 8, _STYLE.get(g.label, ""), len(g.label))
            else:
                add(line, 10, "dim", None)
    infos = verdict.count("info")
    hidden = f", {infos} info (--show-info)" if infos and not show_info else f", {infos} info" if infos else ""
    status = "FAIL" if verdict.failed else "PASS"
    add(one_line(f"{status}: {plural(verdict.count('error'), 'error')}, "
                 f"{plural(verdict.count('warning'), 'warning')}{hidden}, {len(verdict.waived)} waived — "
                 f"{plural(len(verdict.rules_run), 'rule')} over {plural(files, 'file')}"), 6,
        "bold red" if verdict.failed else "bold green", 4)
    text = Text("\n".join(lines))
    for start, end, style in styles:
        text.stylize(style, start, end)
    console.print(text, soft_wrap=True, highlight=False)
