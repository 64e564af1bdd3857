"""`report`: a page a reviewer would rather look at than read — racks, power and heat, fabric, findings."""

from __future__ import annotations

import math
from pathlib import Path

import click

from clusterforge.analysis import PolicyInputs
from clusterforge.cli.app import app, input_files, policy_options, say


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Where to write the report (report.html, or elevations.png with --format png).")
@click.option("--format", "-f", "fmt", type=click.Choice(["html", "png"]), default="html", show_default=True,
              help="html: the whole self-contained page; png: the rack elevations, for PR comments.")
@click.option("--max-racks", type=click.IntRange(1, 100_000), default=1000, show_default=True,
              help="Draw at most this many racks (the rows table still sums them all).")
@policy_options
def report(file: Path, output: Path, fmt: str, max_racks: int, inputs: PolicyInputs) -> None:
    """Write a visual report of the blueprint FILE: rack elevations, power and heat bars, the fabric,
    the findings (linked to their racks), the bill of materials and the cost (`clusterforge cost`'s estimate:
    monthly, capex, per GPU-hour, by category and line; prices from the catalog and any --catalog file).
    Viewing it needs no network.

    \b
    Examples:
      clusterforge report cluster.yaml -o report.html
      clusterforge report cluster.yaml -f png -o elevations.png
    """
    from clusterforge.analysis import analyze, read_policy
    from clusterforge.atomic import refuse_inputs, write_text
    from clusterforge.report import build

    result = analyze(file, read_policy(inputs))
    loaded, plan, verdict = result.loaded, result.plan, result.verdict
    refuse_inputs(output, input_files([loaded.source], file, *inputs.files()))
    page = build(result, max_racks)
    if fmt == "html":
        write_text(output, page)
    else:
        from clusterforge.report.browser import screenshot

        racks = min(len(plan.loads), max_racks) or 1
        height = 420 + 520 * math.ceil(racks / 6)
        screenshot(_elevations_only(page), output, 1300, min(height, 16000))
    state = "FAIL" if verdict.failed else "PASS"
    say(f"wrote {output} ({state}: {verdict.count('error')} errors, {verdict.count('warning')} warnings, "
        f"{len(plan.loads)} racks)")


def _elevations_only(page: str) -> str:
    """The page with only the header and the elevations, for a compact image."""
    import re

    return re.sub(r'<section id="(summary|rows|fabric|cloud|cost|findings|bom)">.*?</section>', "", page, flags=re.S)
