"""The one place that decides how wide clusterforge's text output is, and the console every view prints with.

Tables and wrapped text must fit the screen they land on: a table drawn for 200 columns on an 80-column terminal
wraps into fragments nobody can read, and a `file:line` cut in two is no longer something an editor or a terminal
can open. So the width is:

* `COLUMNS`, when set to a number: the user's (or a test's) explicit word wins, as it does for `ls` and rich;
* else the terminal's own width, when stdout is a terminal;
* else `PIPE_WIDTH` (100): a pipe or a file has no width of its own, and a CI log must read the same on every
  runner, whatever the runner's pseudo-terminal says;

and never less than `MIN_WIDTH` (40), below which no table or indented line reads at all.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

PIPE_WIDTH = 100
MIN_WIDTH = 40


def width() -> int:
    """How many columns stdout's text may use (see the module's docstring for the order)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        chosen = int(columns)
    elif sys.stdout.isatty():
        chosen = shutil.get_terminal_size((PIPE_WIDTH, 24)).columns
    else:
        chosen = PIPE_WIDTH
    return max(chosen, MIN_WIDTH)


def console(**kw: Any) -> Console:
    """A rich Console at `width()` columns; keyword arguments (`highlight`, `record`, `file`, ...) pass through.
    Every command's text view prints through one of these, never with a width of its own."""
    from rich.console import Console

    return Console(width=width(), **kw)


_LOCATION = re.compile(r"\S+:\d+")  # `hall.yaml:25`: an editor opens it only while it stays in one piece


def wrap(text: str, columns: int, indent: int = 0) -> list[str]:
    """`text` (one line) as lines of at most `columns` characters, broken at spaces, each line after the first
    indented by `indent` spaces so a reader sees where the next item starts; spaces inside a line (a column's
    alignment) stay as written. A word longer than a line is cut into pieces, except a `file:line` location:
    that one is left whole even where it is wider than the line, since a cut location opens nothing."""
    pad = " " * indent
    lead = len(text) - len(text.lstrip(" "))
    parts = re.split(r"( +)", text[lead:])
    words, gaps = parts[0::2], ["", *parts[1::2]]
    lines: list[str] = []
    line = text[:lead]
    for gap, word in zip(gaps, words, strict=True):
        fits = len(line) + len(gap) + len(word) <= columns
        too_long = indent + len(word) > columns and not _LOCATION.search(word)  # cut anyway: start it here
        if not line.strip() or fits or (too_long and len(line) + len(gap) < columns - 1):
            line += gap + word
        else:
            lines.append(line)
            line = pad + word
        while len(line) > columns and len(line) - len(word) < columns - 1 and not _LOCATION.search(word):
            room = columns - (len(line) - len(word))
            lines.append(line[:len(line) - len(word) + room])
            word = word[room:]
            line = pad + word
    lines.append(line)
    return lines


# A share `(60 %)` is one word to size a column by: broken before its `%`, a rack's figures read as fragments.
_UNIT_WORDS = re.compile(r"\s+(?!%)")
_SHARE = re.compile(r"\(\d+ %\)")
PROSE = 16  # columns a cell of sentences (a description, a source) needs: narrower, it reads as a word list


def _plain(cell: object) -> str:
    from rich.text import Text

    return cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain


def _widths(table: Table, prose: int, room: int) -> list[int] | None:
    """Each column's width when `table` is to fit `room` characters of cells, or None when it cannot read there.

    Every column first gets its longest word, or its longest cell or `prose` where that is less and more than
    the word; what is left of `room` goes to the columns in proportion to what they still lack. Rich would
    instead narrow the widest columns first, to a few characters where it must, and cut a figure such as
    `44.2/69.0` in the middle of the number."""
    from rich.cells import cell_len

    bases, naturals, figures = [], [], []
    for column in table.columns:
        cells = [line for cell in (column.header, *column.cells) for line in _plain(cell).splitlines() or [""]]
        natural = max(cell_len(line) for line in cells)
        word = max((cell_len(w) for line in cells for w in _UNIT_WORDS.split(line) if w), default=1)
        bases.append(max(word, min(prose, natural), 1))
        naturals.append(max(natural, 1))
        figures.append(any(_SHARE.search(line) for line in cells))
    spare = room - sum(bases)
    if spare < 0:
        return None
    if sum(natural - base for natural, base in zip(naturals, bases, strict=True)) <= spare:
        return naturals
    # A column of shares (`34/44 (77 %)`) is whole or one figure a line: any width between breaks a share in two.
    widths = list(bases)
    flexible = [i for i in range(len(widths)) if not figures[i]]
    wants = {i: naturals[i] - bases[i] for i in flexible}
    if sum(wants.values()) > spare:
        for i in flexible:
            widths[i] += spare * wants[i] // sum(wants.values())
        lacking = sorted(flexible, key=lambda i: naturals[i] - widths[i], reverse=True)
        for i in lacking[:room - sum(widths)]:
            widths[i] += 1
        return widths
    for i in flexible:
        widths[i] = naturals[i]
    for i in (i for i in range(len(widths)) if figures[i]):
        if naturals[i] - widths[i] <= room - sum(widths):
            widths[i] = naturals[i]
    return widths


def _padding(table: Table) -> int:
    """The characters of padding a table's cells add on one line, as rich lays them out (its `padding`,
    `collapse_padding` and `pad_edge`): rich keeps this figure to itself."""
    _, right, _, left = table.padding
    if table.collapse_padding:
        left, right = 0, abs(left - right)
    count = len(table.columns)
    total = (left + right) * count
    if not table.pad_edge and count:
        total -= left + right
    return total


def print_table(out: Console, table: Table, prose: int = PROSE) -> None:
    """`table` as a table where it reads as one, else as one block per row.

    A table that fits is printed as it is; so is one that still reads (each column as wide as its longest word,
    a column of sentences `prose` wide: 0 for a table of figures), its columns sized by `_widths` and its cells
    wrapped at spaces. Narrower than that, columns would shrink to a few characters and every row break into
    fragments, so each row is printed instead as its first cell on a line, then `header  value` lines with the
    values wrapped under themselves: the same cells, readable at any width.
    """
    natural = out.measure(table, options=out.options.update_width(10**6)).maximum  # rich clamps to the width
    if natural <= out.width:
        out.print(table)
        return
    frame = len(table.columns) + 1 if table.box and table.show_edge else len(table.columns) - 1 if table.box else 0
    padding = _padding(table)
    widths = _widths(table, prose, out.width - frame - padding)
    if widths is not None:
        for column, width in zip(table.columns, widths, strict=True):
            column.width = width
        out.print(table)
        return
    if table.title:
        out.print(table.title, style="table.title")
    headers = [_plain(column.header) for column in table.columns]
    label = max(len(header) for header in headers[1:]) if len(headers) > 1 else 0
    rows = zip(*(list(column.cells) for column in table.columns), strict=True)
    for i, row in enumerate(rows):
        if i:
            out.print()
        print_wrapped(out, _plain(row[0]), style="bold")
        for header, cell in zip(headers[1:], row[1:], strict=True):
            if value := _plain(cell).strip():
                print_wrapped(out, f"  {header:<{label}}  {value}", indent=label + 4)
    if table.caption:
        out.print(table.caption, style="table.caption")


def print_wrapped(out: Console, text: str, indent: int = 0, style: str = "") -> None:
    """Plain `text` (input data, never markup) broken for `out` (wrap), each piece a safe CI log line: a piece
    that starts a line could otherwise be read as a workflow command (formats.escape.log_line)."""
    from rich.text import Text

    from clusterforge.formats.escape import log_line

    for piece in wrap(log_line(text), out.width, indent):
        out.print(Text(log_line(piece), style=style), soft_wrap=True, highlight=False)
