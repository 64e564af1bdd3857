"""`check`: the policy verdict on blueprints, for people, CI logs, code scanning and test reports."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, input_files, policy_options, say
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.formats import FORMATS
from clusterforge.pipeline.analysis import PolicyInputs

if TYPE_CHECKING:
    from clusterforge.policies import Verdict


@app.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text for people; json; sarif for code scanning; junit for test reports; github for annotations "
                   "(and the full table in $GITHUB_STEP_SUMMARY when set); markdown for a PR comment.")
@policy_options
@click.option("--fail-level", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Lowest unwaived level that fails the check.")
@click.option("--show-info", is_flag=True, help="Also list info findings in text output.")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the report to a file (atomically) instead of stdout.")
@click.option("--today", type=click.DateTime(formats=["%Y-%m-%d"]), hidden=True)
def check(files: tuple[Path, ...], fmt: str, inputs: PolicyInputs, fail_level: str, show_info: bool,
          output: Path | None, today: dt.datetime | None) -> None:
    """Decide whether the designs in FILES physically fit: power, space, cooling, fabric, storage, software.

    \b
    FILES may be blueprints (kind: Cluster), folders, `-` and site files:
      a folder      every *.yaml/*.yml below it that is a Cluster or a Site
                    (hidden folders are skipped; other YAML is skipped with a note);
                    a folder with neither is invalid input (exit 2)
      -             one blueprint on stdin; its includes resolve against the
                    current directory
      a Site file   the Cluster blueprints that include it, looked for among
                    FILES; in the site's folder and below; in each folder
                    between the current directory and the site's (their own
                    files); below CLUSTERFORGE_INCLUDE_ROOT when it is set.
                    A site that none includes is said, and passes.
    Each blueprint is checked once, however many ways it is named.
    \b
    Exit codes: 0 pass, 1 policy failure (an unwaived error, or a warning with
    --fail-level warning), 2 unreadable or invalid input, 3 internal error
    (a bug: please report it).
    \b
    Examples:
      clusterforge check cluster.yaml
      clusterforge check blueprints/*.yaml --format sarif -o check.sarif
      clusterforge check cluster.yaml --format github --waivers waivers.yaml
      clusterforge check sites/dc1.yaml        every team that includes it
      clusterforge check blueprints/
    """
    from clusterforge.cli.check_view import emit, emit_input_errors
    from clusterforge.core.bulk import bulk_objects

    inputs = replace(inputs, fail_level=fail_level, today=today.date() if today else None)
    with bulk_objects(kept=True):  # the findings and the plan live to the end: the collector would only walk them
        try:
            verdict, count = _judge(files, inputs, output)
        except _Refused:
            raise
        except _PartlyJudged as error:  # exit 2; the report holds the problems and the others' findings
            emit_input_errors(error, fmt, output, [*files, *inputs.files()], fail_level, error.judged, error.count)
            raise
        except ClusterforgeError as error:  # exit 2, and the reason in the report CI reads (not for text on stdout)
            emit_input_errors(error, fmt, output, [*files, *inputs.files()], fail_level)
            raise
        emit(verdict, fmt, output, count, show_info)
    if verdict.failed:
        raise click.exceptions.Exit(EXIT_POLICY)


class _Refused(ClusterforgeError):
    """The output would overwrite an input: an input error that must not write the output either."""


class _PartlyJudged(ClusterforgeError):
    """Some blueprints could not be read or judged (their problems: exit 2), and `judged` is the verdict over the
    `count` others: one unreadable file must not hide another file's findings."""

    def __init__(self, problems: list[Problem], judged: Verdict, count: int) -> None:
        super().__init__(problems)
        self.judged = judged
        self.count = count


def _judge(files: tuple[Path, ...], inputs: PolicyInputs, output: Path | None) -> tuple[Verdict, int]:
    """The verdict over what FILES name (clusterforge.compose.site_users), and how many blueprints it covers."""
    from clusterforge.cli.check_inputs import empty_folders, load_all
    from clusterforge.compose.site_users import select
    from clusterforge.pipeline.analysis import check_set, read_policy
    from clusterforge.policies import Verdict

    policy = read_policy(inputs)
    chosen = select(files)
    for note in chosen.notes:
        say(note)
    loadeds, problems = load_all(chosen.blueprints, policy)
    problems = [*empty_folders(files), *problems]
    if output is not None:
        from clusterforge.files.atomic import refuse_inputs

        try:
            refuse_inputs(output, input_files([loaded.source for loaded in loadeds], *files, *inputs.files()))
        except ClusterforgeError as error:
            raise _Refused(error.problems) from None
    if not loadeds:
        if problems:
            raise ClusterforgeError(problems)
        say("no blueprint to check")  # only sites that no blueprint includes: said above
        return Verdict((), (), policy.inputs.fail_level), 0
    checked = check_set(loadeds, policy)
    for note in checked.notes:
        say(note)
    problems += checked.problems
    if problems:
        raise _PartlyJudged(problems, checked.verdict, checked.judged)
    return checked.verdict, len(loadeds)
