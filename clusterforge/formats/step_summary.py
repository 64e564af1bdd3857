"""The GitHub Actions job summary: `check -f github` appends the full grouped table (formats.markdown) to the
file $GITHUB_STEP_SUMMARY names, since the annotations show only 10 groups per level."""

from __future__ import annotations

import os

from clusterforge.formats import markdown
from clusterforge.policies import Verdict

VARIABLE = "GITHUB_STEP_SUMMARY"


def append(verdict: Verdict) -> str | None:
    """Append the verdict's table to the step summary when the runner set one; the file's name, or None when
    none is set. The file is opened once in append mode and the table written in one call, so steps that write
    their own summaries keep theirs. OSError reaches the caller (a summary that cannot be written)."""
    path = os.environ.get(VARIABLE, "")
    if not path:
        return None
    data = markdown.render(verdict).encode("utf-8", "backslashreplace")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return path
