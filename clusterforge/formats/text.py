"""The human view: one line per rule and cause (formats.grouping), errors first, then one summary line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from clusterforge.errors import one_line
from clusterforge.formats.escape import log_line, plural
from clusterforge.formats.grouping import Group, counted, group, location, use

if TYPE_CHECKING:
    from rich.console import Console

    from clusterforge.policies import Verdict

_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim", "waived": "cyan"}


def console_for_stdout() -> Console:
    """A terminal keeps its width; a CI log gets a wide console instead of 80 columns."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=150)


def group_lines(g: Group) -> list[str]:
    """`WARNING PWR-002 ×4,167 racks r000k[00-23],…(+4,119 more) (hall.yaml:25, …; 99%): message`, then
    `→ hint` on its own line: each a line a CI log cannot read as a workflow command (escape.log_line)."""
    where = location(g) + (f"; {share}" if (share := use(g)) else "")
    message = g.message + (f" — waived: {g.reason}" if g.waived else "")
    lines = [f"{g.label.upper():<7} {g.rule} {counted(g)} ({where}): {message}"]
    if g.hint:
        lines.append(f"        → {g.hint}")
    return [log_line(line) for line in lines]


def print_verdict(verdict: Verdict, console: Console, files: int, show_info: bool = False) -> None:
    """Every group of findings, most severe first, then `FAIL: 1 error, …`. The report is printed in one piece
    and never wrapped (a wrapped line could start with what a CI runner reads as a command); every string from
    the input is plain text, never read as rich markup."""
    lines: list[str] = []
    styles: list[tuple[int, int, str]] = []
    at = 0
    for g in group(verdict, show_info):
        for i, line in enumerate(group_lines(g)):
            if i == 0:
                styles.append((at, at + len(g.label), _STYLE.get(g.label, "")))
            else:
                styles.append((at, at + len(line), "dim"))
            lines.append(line)
            at += len(line) + 1
    infos = verdict.count("info")
    hidden = f", {infos} info (--show-info)" if infos and not show_info else f", {infos} info" if infos else ""
    status = "FAIL" if verdict.failed else "PASS"
    styles.append((at, at + 4, "bold red" if verdict.failed else "bold green"))
    lines.append(one_line(f"{status}: {plural(verdict.count('error'), 'error')}, "
                          f"{plural(verdict.count('warning'), 'warning')}{hidden}, {len(verdict.waived)} waived — "
                          f"{plural(len(verdict.rules_run), 'rule')} over {plural(files, 'file')}"))
    text = Text("\n".join(lines))
    for start, end, style in styles:
        if style:
            text.stylize(style, start, end)
    console.print(text, soft_wrap=True, highlight=False)
