"""`diff -f markdown`: the pull-request comment for a change to a running cluster. The cost item by item
(formats.cost_diff, which carries the marker the workflow finds its comment by), then what applying it means
for running work: the verdict and one table row per heading of diff_view (same action, hosts and reason), most
disruptive first. Every string from the input is a code span or literal text (formats.escape)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clusterforge.day2.diff_view import headings, hostlist, short_why, verdict
from clusterforge.formats.cost_diff import MARKER
from clusterforge.formats.cost_diff import markdown as cost_markdown
from clusterforge.formats.escape import markdown_code, markdown_safe

if TYPE_CHECKING:
    from clusterforge.day2.changes import Diff
    from clusterforge.day2.cost_delta import CostDelta

MAX_ROWS = 50  # a comment is read, not searched: `diff -f json` lists every change
HOSTS_WIDTH = 120


def markdown(old: str, new: str, result: Diff, cost: CostDelta | None) -> str:
    if cost is not None:
        out = [cost_markdown(cost.view(old, new)).rstrip("\n"), ""]
    else:
        out = [MARKER, f"### clusterforge diff: {markdown_code(old)} → {markdown_code(new)}", "",
               "Cost not compared: a render directory has no plan.", ""]
    out += ["#### Running work", "", f"**{markdown_safe(verdict(result))}**", ""]
    found = headings(result)
    if found:
        out += ["| action | hosts | settings | why |", "|---|---|---|---|"]
        for heading in found[:MAX_ROWS]:
            hosts = f"{len(heading.hosts):,}: {markdown_code(hostlist(heading.hosts, HOSTS_WIDTH))}" \
                if heading.hosts else "none"
            if heading.daemon:
                hosts += f" ({markdown_safe(heading.daemon)})"
            keys = "<br>".join(markdown_code(f"{item.file}: {item.key}") for item in heading.items[:10])
            if len(heading.items) > 10:
                keys += f"<br>and {len(heading.items) - 10:,} more"
            out.append(f"| {heading.action.name} | {hosts} | {keys} | {markdown_safe(short_why(heading.why))} |")
        if len(found) > MAX_ROWS:
            out.append(f"\n{len(found) - MAX_ROWS:,} more rows left out: `clusterforge diff -f json` lists every "
                       "change.")
    else:
        out.append("No setting changed.")
    return "\n".join(out) + "\n"
