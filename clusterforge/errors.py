"""The one exception type of the package; the CLI is the only place that prints it and exits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as the loader could."""

    message: str
    file: str = "<input>"
    line: int = 0
    path: str = ""
    hint: str = ""

    def render(self) -> str:
        """Format as `file:line: path: message (hint)`, the shape editors and CI annotate."""
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


class ClusterforgeError(Exception):
    """Bad input or an impossible request; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = problems
        super().__init__("\n".join(p.render() for p in problems))
