"""`cost`: what the blueprint's cluster costs, line by line, with each price's source and date."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from clusterforge.cli.app import app, catalog_option, format_option, input_files, say
from clusterforge.pipeline.analysis import PolicyInputs


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@catalog_option
@format_option("text", "json", "markdown")
@click.option("--output", "-o", "output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write here (atomically) instead of standard output.")
@click.option("--idle-share", "idle_share", type=click.FloatRange(0, 1), default=None, metavar="SHARE",
              help="Part of the month (0 to 1) a power-saved on-prem pool's nodes above count are powered down: "
                   "sizes the 'power saved' lines only, never the totals. Default 0.5, an assumption "
                   "(cost/power_saving.py DEFAULT_IDLE_SHARE); measure yours.")
def cost(file: Path, catalog: tuple[Path, ...], fmt: str, output: Path | None, idle_share: float | None) -> None:
    """Estimate what blueprint FILE costs: cloud pools per instance-hour, FSx per GB-month, on-prem servers,
    switches, links, racks and rack cooling bought once, and on-prem power per month. Every line names its
    price's source and date; a line marked estimate has no published list price behind it.

    Prices are catalog data (clusterforge/catalog/data/prices.yaml). A --catalog file with a `prices:` section
    replaces them entry by entry (negotiated rates); its lines then name that file. `cost.purchase` and a
    pool's `purchase` (on-demand, capacity-block, reservation, savings-plan) choose the rate; `budget:` makes
    `check` fail when the estimate exceeds it (COST-001). docs/cost.md has the formulas.

    An on-prem pool with `max_count` is bought at max_count and powered at max_count (what a budget must hold);
    a separate "power saved" line shows what its idle nodes powered down save, at --idle-share.

    \b
    Examples:
      clusterforge cost cluster.yaml
      clusterforge cost cluster.yaml --catalog negotiated-prices.yaml -f markdown -o cost.md
      clusterforge cost cluster.yaml -f json | jq .usd_per_gpu_hour
      clusterforge cost onprem.yaml --idle-share 0.7 -f json | jq .saved_monthly_usd

    \b
    Exit codes: 0 estimated, 2 unreadable or invalid input (blueprint or price file, with file:line).
    """
    from clusterforge.cost import estimate_cost
    from clusterforge.pipeline.analysis import analyze, read_policy

    policy = read_policy(PolicyInputs(tuple(catalog)))
    result = analyze(file, policy)
    cluster = result.cluster
    estimate = estimate_cost(cluster, result.plan, policy.catalog, idle_share)
    years = cluster.cost.amortise_years
    if fmt == "json":
        from clusterforge.formats import json_safe

        body = json.dumps(json_safe(estimate.as_json()), indent=2) + "\n"
    elif fmt == "markdown":
        from clusterforge.formats.cost import markdown

        body = markdown(cluster.name, estimate, years)
    else:
        from clusterforge.formats.cost import text

        body = text(cluster.name, estimate, years, shutil.get_terminal_size().columns)
    if output is None:
        click.echo(body, nl=False)
        return
    from clusterforge.files.atomic import refuse_inputs, write_text

    refuse_inputs(output, input_files([result.loaded.source], file, *catalog))
    write_text(output, body)
    say(f"wrote {output}")
