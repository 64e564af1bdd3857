"""Text every format shares: counts in words, and strings made safe for JSON and XML whatever the input."""

from __future__ import annotations

import re
from typing import Any

from clusterforge.core.errors import one_line


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NOT_XML = re.compile(r"[\ufffe\uffff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_safe(data: Any) -> Any:
    """`data` with every lone surrogate in its strings (a file name that is not UTF-8) written as `\\udcff`,
    so the JSON is valid UTF-8 whatever the input; json.dumps escapes the control characters itself."""
    if isinstance(data, str):
        return _SURROGATE.sub(_escaped, data)
    if isinstance(data, dict):
        return {json_safe(k): json_safe(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [json_safe(v) for v in data]
    return data


def xml_safe(text: str) -> str:
    """`text` on one line with every character XML 1.0 forbids (controls, lone surrogates, U+FFFE/FFFF)
    written out as an escape, so a JUnit reader parses the file whatever the input said."""
    return _NOT_XML.sub(_escaped, one_line(text))


_STARTS_A_COMMAND = re.compile(r"\W*::")  # GitHub trims leading blanks, then reads `::name ...::data`
_OLD_COMMAND = "##["  # the older `##[name ...]data` form, read anywhere in a line


def log_line(text: str) -> str:
    """`text` as a line of a log CI reads: one line, and never a GitHub workflow command.

    The runner reads a line as a command when it starts with `::` after leading blanks, or when `##[` appears
    anywhere in it; either could annotate a file, mask a value or stop command processing. A line that would
    start one gets `./` in front (a file name that leads the line stays a valid path to the same file), and
    `##[` is written `##\\x5b` like the other escapes. Every line clusterforge prints that can carry a file
    name or other input goes through here (the `github` format's own commands are built, not filtered).
    """
    line = one_line(text).replace(_OLD_COMMAND, "##\\x5b")
    return "./" + line if _STARTS_A_COMMAND.match(line) else line


# What GitHub's Markdown or HTML could read as syntax inside a table cell: emphasis and strikethrough, links and
# images, raw HTML and entities, code spans, headings, cell borders (`|`), the backslash, @mentions, and the
# autolinks: `://` of a URL, `www.` (only those `:` and `.` are escaped, so figures stay readable). `_` between two
# letters or digits is left alone (it neither opens nor closes emphasis: `PERSISTENT_2`), and `!` too (an image
# needs the `[` after it, which is escaped). `$` is handled apart (`_math`).
_MARKDOWN = re.compile(r"[\\`*\[\]<>#|~&@]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|:(?=//)|(?i:(?<=www)\.)")
# GitHub reads `$...$` as math where the opening `$` has no blank after it and the closing one none before it (any
# other space counts as a character here: the test errs towards escaping).
_OPENS, _CLOSES = re.compile(r"\$(?=[^ \t])"), re.compile(r"(?<=[^ \t])\$")


def _math(text: str) -> bool:
    """Two of `text`'s `$` could enclose math: one that may open before one that may close."""
    opens = [m.start() for m in _OPENS.finditer(text)]
    return bool(opens) and any(m.start() > opens[0] for m in _CLOSES.finditer(text))


def markdown_safe(text: str) -> str:
    """`text` on one line as literal text in Markdown, a table cell included, that still reads as text: every
    character Markdown or HTML could read as syntax gets a backslash (`\\<`, `\\*`, `\\|`), which CommonMark shows
    as the character alone and never interprets; an HTML entity would be shown by GitHub but read as `&#60;` by
    anyone reading the Markdown itself (a notification email, the file). `$` is escaped only where two of them could
    enclose math, so a figure such as `$1,234` stays as it is. Blueprint names and messages are untrusted: written
    this way they cannot open a tag, a link, an image, a math span or a new cell. A name a reader copies (a file,
    a rule id, a place) is better a code span (`markdown_code`)."""
    line = _MARKDOWN.sub(lambda m: "\\" + m.group(), one_line(text))
    return line.replace("$", "\\$") if _math(line) else line


_BACKTICKS = re.compile(r"`+")


def markdown_code(text: str) -> str:
    """`text` on one line as a Markdown code span that also holds in a table cell: nothing inside a code span
    is read as Markdown, HTML or an entity; the fence is one backtick longer than any run inside it, and `|`
    is written `\\|`, which GitHub's tables read as the character inside a cell, code spans included."""
    line = one_line(text).replace("|", "\\|").replace(_OLD_COMMAND, "##\\x5b")  # the report may reach a CI log
    if not line:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") or (line.startswith(" ") and line.endswith(" ")) else ""
    return f"{fence}{pad}{line}{pad}{fence}"
