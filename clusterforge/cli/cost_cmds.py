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
def cost(file: Path, catalog: tuple[Path, ...], fmt: str, output: Path | None) -> None:
    """Estimate what blueprint FILE costs: cloud pools per instance-hour, FSx per GB-month, on-prem servers,
    switches, links, racks and rack cooling bought once, and on-prem power per month. Every line names its
    price's source and date; a line marked estimate has no published list price behind it.

    Prices are catalog data (clusterforge/catalog/data/prices.yaml). A --catalog file with a `prices:` section
    replaces them entry by entry (negotiated rates); its lines then name that file. `cost.purchase` and a
    pool's `purchase` (on-demand, capacity-block, reservation, savings-plan) choose the rate; `budget:` makes
    `check` fail when the estimate exceeds it (COST-001). docs/cost.md has the formulas.

    \b
    Examples:
      clusterforge cost cluster.yaml
      clusterforge cost cluster.yaml --catalog negotiated-prices.yaml -f markdown -o cost.md
      clusterforge cost cluster.yaml -f json | jq .usd_per_gpu_hour

    \b
    Exit codes: 0 estimated, 2 unreadable or invalid input (blueprint or price file, with file:line).
    """
    from clusterforge.cost import estimate_cost
    from clusterforge.pipeline.analysis import analyze, read_policy

    policy = read_policy(PolicyInputs(tuple(catalog)))
    result = analyze(file, policy)
    cluster = result.cluster
    estimate = estimate_cost(cluster, result.plan, policy.catalog)
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
