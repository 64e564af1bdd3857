"""GitHub Actions workflow commands: `::error file=F,line=L,title=ID::message` on the offending line.

GitHub shows at most 10 annotations of each level per step and drops the rest, so findings are grouped by
rule and cause (formats.grouping), most severe first: at most 10 `::error`, 10 `::warning` and 10 `::notice`
commands, each carrying its group's count and targets; a last notice says how many groups were left out and
where the full table is (the job's step summary, formats.step_summary, when $GITHUB_STEP_SUMMARY is set).
"""

from __future__ import annotations

from clusterforge.core.errors import one_line
from clusterforge.files.paths import report_path
from clusterforge.formats.escape import plural
from clusterforge.formats.grouping import Group, group
from clusterforge.policies import Verdict

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
PER_LEVEL = 10  # GitHub's limit of annotations per level and step


def _data(text: str) -> str:
    """A command's message as GitHub reads it back (`%`, CR, LF encoded); other controls shown as escapes."""
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    """A property value (file, title): as a message, and `:` and `,` encoded too, which end a property."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(g: Group) -> str:
    f = g.first
    title = f.id + (" (waived)" if g.waived else "") + (f" ×{g.count:,}" if g.count > 1 else "")
    message = g.message if g.count == 1 else f"{g.targets()}: {g.message}"
    if g.waived:
        message += f" — waived: {g.reason}"
    elif g.hint:
        message += f" — {g.hint}"
    command = "notice" if g.waived else _COMMAND[g.level]
    return (f"::{command} file={_property(report_path(f.file))},line={max(1, f.line)},"
            f"title={_property(title)}::{_data(message)}")


def render(verdict: Verdict, summary: bool = False) -> str:
    """The annotations, then one plain line with the verdict. `summary`: the full table was written to the
    job's step summary, which the notice about left-out groups points to."""
    lines, left = [], 0
    used = dict.fromkeys(("error", "warning", "notice"), 0)
    groups = group(verdict)
    for g in groups:
        command = "notice" if g.waived else _COMMAND[g.level]
        kept = 1 if command == "notice" else 0  # one notice kept for the line about the rest
        if used[command] >= PER_LEVEL - kept:
            left += 1
            continue
        used[command] += 1
        lines.append(_annotation(g))
    if left:
        where = "the job summary" if summary else "`clusterforge check -f text` or `-f markdown`"
        lines.append(f"::notice title=clusterforge check::{left} more {'group' if left == 1 else 'groups'} of "
                     f"findings not annotated (GitHub shows {PER_LEVEL} per level); the full table is in {where}")
    state = "failed" if verdict.failed else "passed"
    lines.append(f"clusterforge check {state}: {plural(verdict.count('error'), 'error')}, "
                 f"{plural(verdict.count('warning'), 'warning')}, {len(verdict.waived)} waived")
    return "\n".join(lines) + "\n"
