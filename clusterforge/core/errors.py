"""The one exception type of the package; the CLI is the only place that prints it and exits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def shown(value: Any, limit: int = 60) -> str:
    """A value from the input as it may appear in a message: repr'd, on one line, at most `limit` characters.

    Input is untrusted: a message must not carry a file's contents, forge a line of CI output or flood a log.
    """
    text = one_line(repr(value) if isinstance(value, str) else str(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str) -> str:
    """`text` with control characters, line separators and lone surrogates escaped, so it stays one line."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", text)


NO_FILE = "<input>"  # a problem of no file: an unknown template's name, an option's value, a refused stack setting


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as the loader could."""

    message: str
    file: str = NO_FILE
    line: int = 0
    path: str = ""
    hint: str = ""

    def render(self) -> str:
        """Format as `file:line: path: message (hint)`, the shape editors and CI annotate. A problem of no file
        has no location to annotate: `path: message`, or the message alone, with no made-up file name before it
        (text read from no file keeps its line: `line 3: path: message`)."""
        if self.file in ("", NO_FILE):
            where = f"line {self.line}" if self.line else ""
        else:
            where = f"{self.file}:{self.line}" if self.line else self.file
        text = ": ".join(part for part in (where, self.path, self.message) if part)
        return one_line(f"{text} ({self.hint})" if self.hint else text)


class ClusterforgeError(Exception):
    """Bad input or an impossible request; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = problems
        super().__init__("\n".join(p.render() for p in problems))
