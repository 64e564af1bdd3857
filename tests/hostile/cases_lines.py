"""Every line a command prints about a file it was given: a name that is a workflow command stays text.

A GitHub runner reads each line of a step's output (stdout and stderr alike) as a workflow command when it
starts with `::` after leading blanks. The blueprint here is valid but does not fit its site, so `plan` names
it in its `cannot be built` line and `render` in its refusal and in each finding listed below that; `validate`
and `report` name their files in their one-line summaries. Run from the folder above the tree, the bare name
leads each of those lines; the report's name carries the older `##[` form.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES
from tests.hostile.harness import RUNS, Case

NAME = "::error file=x::forged.yaml"
REPORT = "x ##[error]report.html"  # the older form, read anywhere in a line


def _does_not_fit() -> str:
    """The example hall with 40 nodes and no placements: the planner fits 18, RCK-008 fails the rest."""
    hall = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    crowded = (hall.replace("count: 16, role", "count: 40, role")
               .replace("          devices: [{pool: gpu, count: 3}]\n", "")
               .replace(", devices: [{pool: gpu, count: 2}]", ""))
    assert "devices:" not in crowded and "count: 40" in crowded
    return crowded


def _beside_the_tree(text: str) -> Callable[[Path], None]:
    def prepare(tree: Path) -> None:
        (tree.parent / NAME).write_text(text)
    return prepare


def _no_line_is_a_command(case: str) -> Callable[[Path, Path], None]:
    def check(tree: Path, out: Path) -> None:
        # this case's last run, the one just recorded: the harness checks right after each run, one command of a
        # case at a time, but two cases run side by side (RUNS[-1] could be the other case's)
        run = next(r for r in reversed(RUNS) if r.case == case)
        forged = [line for line in run.output.splitlines()
                  if line.lstrip().startswith("::") or "##[" in line]
        assert not forged, f"{run.command} printed a workflow command: {forged[:3]}"
    return check


CASES = [
    Case("lines-file-named-like-a-command", "a blueprint named like a workflow command that does not fit its "
         "site: every line naming it (plan's, render's refusal and findings, validate's, report's) stays text",
         {},
         argv=[["plan", "--", NAME], ["plan", "-f", "json", "--", NAME],
               ["render", "-o", "{out}/render", "--", NAME], ["render", "--force", "-o", "{out}/forced", "--", NAME],
               ["validate", "--", NAME], ["report", "-o", f"{{out}}/{REPORT}", "--", NAME]],
         prepare=_beside_the_tree(_does_not_fit()),
         exits={"plan#0": frozenset({1}), "plan#1": frozenset({1}), "render#2": frozenset({1}), "*": frozenset({0})},
         says={"plan#0": f"./{NAME}: cannot be built:", "render#2": f"./{NAME}: the policy check has",
               "render#3": f"./{NAME}:9: RCK-008", "validate#4": f"./{NAME}: valid",
               "report#5": "x ##\\x5berror]report.html"},
         check=_no_line_is_a_command("lines-file-named-like-a-command"), seconds=10, rss_mib=200),
]
