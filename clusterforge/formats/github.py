"""GitHub Actions workflow commands: `::error file=F,line=L,title=ID::message` on the offending line."""

from __future__ import annotations

from clusterforge.errors import one_line
from clusterforge.formats.escape import plural
from clusterforge.formats.paths import report_path
from clusterforge.policies import Verdict

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    """A command's message as GitHub reads it back (`%`, CR, LF encoded); other controls shown as escapes."""
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    """A property value (file, title): as a message, and `:` and `,` encoded too, which end a property."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(verdict: Verdict) -> str:
    lines = []
    for f in verdict.findings:
        message = f.message + (f" — {f.hint}" if f.hint else "")
        lines.append(f"::{_COMMAND[f.level]} file={_property(report_path(f.file))},line={max(1, f.line)},"
                     f"title={_property(f.id)}::{_data(message)}")
    for f in verdict.waived:
        reason = (f.waiver or {}).get("reason", "")
        lines.append(f"::notice file={_property(report_path(f.file))},line={max(1, f.line)},"
                     f"title={_property(f.id + ' (waived)')}::{_data(f.message + ' — waived: ' + reason)}")
    state = "failed" if verdict.failed else "passed"
    lines.append(f"clusterforge check {state}: {plural(verdict.count('error'), 'error')}, "
                 f"{plural(verdict.count('warning'), 'warning')}, {len(verdict.waived)} waived")
    return "\n".join(lines) + "\n"
