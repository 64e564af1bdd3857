"""Markdown: the verdict as one table of groups (formats.grouping), for a pull-request comment or a GitHub
Actions job summary. Every string from the input is written with escape.markdown_safe (messages) or as a code
span (escape.markdown_code: rule ids, targets, file names), so a rack named `<img src=x onerror=...>` or
`| forged |` is shown as text and adds no tag, link or cell."""

from __future__ import annotations

from clusterforge.formats.escape import markdown_code, markdown_safe, plural
from clusterforge.formats.grouping import Group, group, location, use
from clusterforge.policies import Verdict

TARGETS_WIDTH = 400  # a table cell can hold more of the hostlist than a log line
MAX_BYTES = 900_000  # GitHub accepts up to 1 MiB of summary per step; longer tables are cut with a note


def _row(g: Group) -> str:
    targets = g.targets(TARGETS_WIDTH) if g.count > 1 else g.first.group
    finding = markdown_safe(g.message)
    if g.waived:
        finding += " — waived: " + markdown_safe(g.reason)
    elif g.hint:
        finding += "<br>→ " + markdown_safe(g.hint)
    cells = [g.label, markdown_code(g.rule), f"{g.count:,}", markdown_code(targets), markdown_code(location(g)),
             use(g), finding]
    return "| " + " | ".join(cells) + " |"


def render(verdict: Verdict, max_bytes: int = MAX_BYTES) -> str:
    """A heading with the verdict, the counts, and a table with a row per group, most severe first."""
    state = "FAIL" if verdict.failed else "PASS"
    lines = [
        f"### clusterforge check: {state}", "",
        f"{plural(verdict.count('error'), 'error')}, {plural(verdict.count('warning'), 'warning')}, "
        f"{plural(verdict.count('info'), 'info finding')}, {len(verdict.waived)} waived — "
        f"{plural(len(verdict.rules_run), 'rule')} run", "",
    ]
    groups = group(verdict)
    if groups:
        lines += ["| level | rule | count | targets | where | use | finding |", "|---|---|---:|---|---|---:|---|"]
    size = sum(len(line) + 1 for line in lines)
    for i, g in enumerate(groups):
        row = _row(g)
        size += len(row.encode("utf-8", "surrogatepass")) + 1
        if size > max_bytes:
            lines += ["", f"{len(groups) - i:,} more groups left out (the summary's size limit): "
                          "`clusterforge check -f json` lists every finding."]
            break
        lines.append(row)
    return "\n".join(lines) + "\n"
