"""`check`: the policy verdict on blueprints, for people, CI logs, code scanning and test reports."""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import replace
from pathlib import Path

import click

from clusterforge.analysis import PolicyInputs
from clusterforge.cli.app import EXIT_INPUT, EXIT_POLICY, app, input_files, policy_options, print_problems, say
from clusterforge.errors import ClusterforgeError
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
    from clusterforge.analysis import bulk_objects

    with bulk_objects(kept=True):  # the findings and the plan live to the end: the collector would only walk them
        _check(files, fmt, replace(inputs, fail_level=fail_level, today=today.date() if today else None), output,
               show_info)


def _check(files: tuple[Path, ...], fmt: str, inputs: PolicyInputs, output: Path | None, show_info: bool) -> None:
    from clusterforge.analysis import analyze, load, read_policy
    from clusterforge.policies.engine import merge
    from clusterforge.policies.registry import REGISTRY

    policy = read_policy(inputs)
    loadeds, broken = [], False
    for path in files:
        try:
            loadeds.append(load(path, policy))
        except ClusterforgeError as error:
            print_problems(error)
            broken = True
    if broken:
        raise click.exceptions.Exit(EXIT_INPUT)
    if output is not None:
        from clusterforge.atomic import refuse_inputs

        refuse_inputs(output, input_files([loaded.source for loaded in loadeds], *files, *inputs.files()))
    from clusterforge.compose import check_together, groups
    from clusterforge.formats.paths import report_path

    site_rules = frozenset(r.id for r in REGISTRY.values() if r.needs_site)
    shared = groups(loadeds)
    in_a_group = {id(loaded) for group in shared for loaded in group}
    verdicts = []
    for loaded in loadeds:  # facility rules of teams on a shared site run once, on the combined load
        extra = site_rules if id(loaded) in in_a_group else frozenset()
        verdicts.append(analyze(loaded, policy, detail=False, also_skip=extra).verdict)
    for group in shared:
        combined, together = check_together(group, policy)
        verdicts.append(together)
        teams = ", ".join(report_path(g.file) for g in group)
        say(f"{report_path(combined.file)}: shared by {teams}: facility rules check their combined load")
    # one blueprint's verdict was decided with these waivers already: merging it again would only copy 100,000
    # findings
    verdict = verdicts[0] if len(verdicts) == 1 else merge(verdicts, policy.waivers, policy.inputs.today)
    _emit(verdict, fmt, output, len(files), show_info)
    if verdict.failed:
        raise click.exceptions.Exit(EXIT_POLICY)


def _emit(verdict: object, fmt: str, output: Path | None, files: int, show_info: bool) -> None:
    from clusterforge.policies import Verdict

    assert isinstance(verdict, Verdict)
    if fmt == "text":
        from rich.console import Console

        from clusterforge.formats.text import console_for_stdout, print_verdict

        if output is None:
            print_verdict(verdict, console_for_stdout(), files, show_info)
            return
        console = Console(record=True, width=160, file=io.StringIO())
        print_verdict(verdict, console, files, show_info)
        text = console.export_text()
    else:
        from clusterforge.formats import render

        text = render(verdict, fmt, summary=fmt == "github" and _step_summary(verdict))
    if output is None:
        click.echo(text, nl=False)
    else:
        from clusterforge.atomic import write_text

        write_text(output, text)
        say(f"wrote {output}")


def _step_summary(verdict: object) -> bool:
    """Append the grouped table to the GitHub job summary when the runner names one; whether it was written.
    A summary that cannot be written is said on stderr and leaves the verdict and the annotations as they are."""
    from clusterforge.formats import step_summary
    from clusterforge.policies import Verdict

    assert isinstance(verdict, Verdict)
    try:
        return step_summary.append(verdict) is not None
    except OSError as error:
        say(f"{step_summary.VARIABLE}: not written: {error.strerror or error}")
        return False
