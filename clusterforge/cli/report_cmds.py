"""`report`: a page a reviewer would rather look at than read — racks, power and heat, fabric, findings."""

from __future__ import annotations

from pathlib import Path

import click

from clusterforge.cli.app import app, input_files, policy_options, say
from clusterforge.formats.escape import plural
from clusterforge.pipeline.analysis import PolicyInputs
from clusterforge.report import MAX_RACKS


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Where to write the report (report.html, or elevations.png with --format png).")
@click.option("--format", "-f", "fmt", type=click.Choice(["html", "png"]), default="html", show_default=True,
              help="html: the whole self-contained page; png: the header and the drawings (rack elevations, or "
                   "a cloud's pools and storage) at their real size, for PR comments.")
@click.option("--max-racks", type=click.IntRange(1, 100_000), default=MAX_RACKS, show_default=True,
              help="Draw at most this many racks, those with errors first, then warnings (the rows table still "
                   "sums them all).")
@policy_options
def report(file: Path, output: Path, fmt: str, max_racks: int, inputs: PolicyInputs) -> None:
    """Write a visual report of the blueprint FILE: rack elevations, power and heat bars, the fabric,
    the findings by rule (linked to their racks), the bill of materials and the cost (`clusterforge cost`'s
    estimate: monthly, capex, per GPU-hour, by category and line; prices from the catalog and any --catalog file).
    A cloud blueprint's pools and FSx for Lustre are drawn where racks would be. Viewing it needs no network.

    The PNG is shot by the system's Chromium (through Playwright) at the drawings' real size; one taller than
    16,000 px is cut between racks into NAME.png, NAME-2.png, ... (the command lists them).

    \b
    Examples:
      clusterforge report cluster.yaml -o report.html
      clusterforge report cluster.yaml -f png -o elevations.png
    """
    from clusterforge.files.atomic import refuse_inputs, write_text
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    result = analyze(file, read_policy(inputs))
    loaded, plan, verdict = result.loaded, result.plan, result.verdict
    refuse_inputs(output, input_files([loaded.source], file, *inputs.files()))
    state = "FAIL" if verdict.failed else "PASS"
    summary = (f"{state}: {plural(verdict.count('error'), 'error')}, {plural(verdict.count('warning'), 'warning')}, "
               f"{plural(len(plan.loads), 'rack')}")
    if fmt == "html":
        write_text(output, build(result, max_racks))
        say(f"wrote {output} ({summary})")
        return
    from clusterforge.report.browser import MAX_PART, capture, find_browser

    find_browser()  # no browser: say so before drawing anything
    shot = capture(build(result, max_racks, drawings_only=True))
    for part in shot.files(output)[1:]:  # a part's file must not overwrite an input either
        refuse_inputs(part, input_files([loaded.source], file, *inputs.files()))
    files = shot.write(output)
    if len(files) == 1:
        say(f"wrote {output} ({shot.width}x{shot.height} px; {summary})")
    else:
        say(f"wrote {len(files)} PNGs, {', '.join(str(f) for f in files)} ({shot.width}x{shot.height} px, cut "
            f"between racks into parts of at most {MAX_PART:,} px; --max-racks draws fewer; {summary})")
