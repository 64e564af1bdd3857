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
@click.option("--measured", "exports", type=click.Path(path_type=Path, dir_okay=False), multiple=True,
              help="A Prometheus export of the nodes' BMC readings (clusterforge_bmc_power_watts, "
                   "clusterforge_bmc_inlet_celsius): an instant query's JSON from /api/v1/query, or the text "
                   "format of /federate. The page shows planned beside measured per rack and feed. Repeatable.")
@policy_options
def report(file: Path, output: Path, fmt: str, max_racks: int, exports: tuple[Path, ...],
           inputs: PolicyInputs) -> None:
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
      clusterforge report cluster.yaml --measured bmc-power.json -o report.html
    """
    from clusterforge.cli.site_file import refuse_site
    from clusterforge.files.atomic import refuse_inputs, write_text
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    refuse_site(file, "report")
    result = analyze(file, read_policy(inputs))
    loaded, plan, verdict = result.loaded, result.plan, result.verdict
    read = input_files([loaded.source], file, *exports, *inputs.files())
    refuse_inputs(output, read)
    measured = None
    if exports:
        from clusterforge.report.measured import compare
        from clusterforge.report.prometheus import read_export

        measured = compare(result, [read_export(e) for e in exports])
    state = "FAIL" if verdict.failed else "PASS"
    summary = (f"{state}: {plural(verdict.count('error'), 'error')}, {plural(verdict.count('warning'), 'warning')}, "
               f"{plural(len(plan.loads), 'rack')}")
    if measured is not None:
        summary += (f"; measured: {measured.nodes_read:,} of {measured.nodes:,} nodes read, "
                    f"{plural(len(measured.racks_over), 'rack')} and {plural(len(measured.feeds_over), 'feed')} "
                    f"over budget, {plural(len(measured.inlets_over), 'rack')} over the inlet limit")
        if measured.unknown_rack_count:
            summary += f", {plural(measured.unknown_rack_count, 'rack')} the plan lacks"
        summary += "".join(f"; next ({kind} over): {step}" for kind, step in measured.next_steps())
    if fmt == "html":
        write_text(output, build(result, max_racks, measured=measured))
        say(f"wrote {output} ({summary})")
        return
    from clusterforge.report.browser import MAX_PART, capture, find_browser

    find_browser()  # no browser: say so before drawing anything
    shot = capture(build(result, max_racks, drawings_only=True, measured=measured))
    for part in shot.files(output)[1:]:  # a part's file must not overwrite an input either
        refuse_inputs(part, read)
    files = shot.write(output)
    if len(files) == 1:
        say(f"wrote {output} ({shot.width}x{shot.height} px; {summary})")
    else:
        say(f"wrote {len(files)} PNGs, {', '.join(str(f) for f in files)} ({shot.width}x{shot.height} px, cut "
            f"between racks into parts of at most {MAX_PART:,} px; --max-racks draws fewer; {summary})")
