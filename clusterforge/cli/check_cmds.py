"""`check`: the policy verdict on blueprints, for people, CI logs, code scanning and test reports."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import click

from clusterforge.analysis import PolicyInputs
from clusterforge.cli.app import EXIT_POLICY, app, input_files, policy_options, say
from clusterforge.formats import FORMATS


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
    Exit codes: 0 pass, 1 policy failure (an unwaived error, or a warning with
    --fail-level warning), 2 unreadable or invalid input, 3 internal error
    (a bug: please report it).
    \b
    Examples:
      clusterforge check cluster.yaml
      clusterforge check blueprints/*.yaml --format sarif -o check.sarif
      clusterforge check cluster.yaml --format github --waivers waivers.yaml
    """
    from clusterforge.analysis import check_set, load_set, read_policy
    from clusterforge.bulk import bulk_objects
    from clusterforge.cli.check_view import emit

    with bulk_objects(kept=True):  # the findings and the plan live to the end: the collector would only walk them
        policy = read_policy(replace(inputs, fail_level=fail_level, today=today.date() if today else None))
        loadeds = load_set(files, policy)
        if output is not None:
            from clusterforge.atomic import refuse_inputs

            refuse_inputs(output, input_files([loaded.source for loaded in loadeds], *files, *inputs.files()))
        checked = check_set(loadeds, policy)
        for note in checked.notes:
            say(note)
        emit(checked.verdict, fmt, output, len(files), show_info)
    if checked.verdict.failed:
        raise click.exceptions.Exit(EXIT_POLICY)
