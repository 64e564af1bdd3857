"""How `check` hands its verdict over: the text view on a terminal or in a file, a machine format, and the GitHub
job summary beside the annotations."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import click

from clusterforge.cli.app import say


def emit(verdict: object, fmt: str, output: Path | None, files: int, show_info: bool) -> None:
    from clusterforge.policies import Verdict

    assert isinstance(verdict, Verdict)
    if fmt == "text":
        from clusterforge.cli import terminal
        from clusterforge.formats.text import print_verdict

        if output is None:  # broken at spaces for the screen (or the pipe's fixed width), `file:line` kept whole
            columns = terminal.width()
            print_verdict(verdict, terminal.console(), files, show_info,
                          fit=lambda line, indent: terminal.wrap(line, columns, indent))
            return
        # a report file keeps one line per finding and cause, unbroken, for grep and diff: it has no screen
        console = terminal.console(record=True, file=io.StringIO())
        print_verdict(verdict, console, files, show_info)
        text = console.export_text()
    else:
        from clusterforge.formats import render

        text = render(verdict, fmt, summary=fmt == "github" and _step_summary(verdict))
    if output is None:
        click.echo(text, nl=False)
    else:
        from clusterforge.files.atomic import write_text

        write_text(output, text)
        say(f"wrote {output}")


def emit_input_errors(error: object, fmt: str, output: Path | None, inputs: Sequence[Path | str],
                      fail_level: str, judged: object = None, files: int = 0) -> None:
    """On exit 2, the problems as the report a CI step reads (formats.input_errors): a SARIF result, a failing
    JUnit case, JSON findings, `::error` annotations, written to `output` atomically when given, beside the
    findings of the `files` blueprints that could be `judged` (a Verdict) in the same run. Text on stdout shows
    only those findings with the problems among them: the problems go to stderr as always. An output that is one
    of `inputs` is not written."""
    from clusterforge.core.errors import ClusterforgeError
    from clusterforge.formats.input_errors import verdict_of
    from clusterforge.policies import Verdict

    assert isinstance(error, ClusterforgeError)
    assert judged is None or isinstance(judged, Verdict)
    if fmt == "text" and output is None and judged is None:
        return
    if output is not None:
        from clusterforge.files.atomic import refuse_inputs

        try:
            refuse_inputs(output, inputs)
        except ClusterforgeError as refused:
            error.problems += refused.problems
            return
    emit(verdict_of(error.problems, fail_level, judged), fmt, output, files, show_info=False)


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
