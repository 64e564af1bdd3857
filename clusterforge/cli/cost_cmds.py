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
@click.option("--diff", "old", metavar="OLD", default=None,
              help="Compare with blueprint OLD (a file or REV:PATH, such as main:cluster.yaml): each item's cost "
                   "before, after and the difference, the totals and $/GPU-hour; -f markdown is the "
                   "pull-request comment.")
@catalog_option
@format_option("text", "json", "markdown")
@click.option("--output", "-o", "output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write here (atomically) instead of standard output.")
@click.option("--idle-share", "idle_share", type=click.FloatRange(0, 1), default=None, metavar="SHARE",
              help="Part of the month (0 to 1) a power-saved on-prem pool's nodes above count are powered down: "
                   "sizes the 'power saved' lines only, never the totals. Default 0.5, an assumption "
                   "(cost/power_saving.py DEFAULT_IDLE_SHARE); measure yours.")
def cost(file: Path, old: str | None, catalog: tuple[Path, ...], fmt: str, output: Path | None,
         idle_share: float | None) -> None:
    """Estimate what blueprint FILE costs: cloud pools per instance-hour, FSx per GB-month, on-prem servers,
    switches, links, racks and rack cooling bought once, and on-prem power per month. Every line names its
    price's source and date; a line marked estimate has no published list price behind it.

    Prices are catalog data (clusterforge/catalog/data/prices.yaml). A --catalog file with a `prices:` section
    replaces them entry by entry (negotiated rates); its lines then name that file. `cost.purchase` and a
    pool's `purchase` (on-demand, capacity-block, reservation, savings-plan) choose the rate; `budget:` makes
    `check` fail when the estimate exceeds it (COST-001). docs/cost.md has the formulas.

    An on-prem pool with `max_count` is bought at max_count and powered at max_count (what a budget must hold);
    a separate "power saved" line shows what its idle nodes powered down save, at --idle-share.

    With an unpriced pool, the cost per GPU-hour is the priced cost over the priced GPUs, and says which GPUs it
    leaves out; with no GPU priced it is withheld, with the reason.

    With --diff OLD, FILE is the blueprint after the change (a file or REV:PATH too): one row per item with its
    cost before -> after (+difference), `unpriced` (never $0) where a side has no price for it, monthly and
    one-off apart, the totals, $/GPU-hour before and after, and the items no price covers, named. -f markdown is
    one blueprint's section of the PR gate's comment (action.yml writes the comment's hidden marker once, above
    the sections); a commit named by its whole hash in REV:PATH is shown by seven characters.

    \b
    Examples:
      clusterforge cost cluster.yaml
      clusterforge cost --diff main:cluster.yaml cluster.yaml             in a pull request: what it costs
      clusterforge cost --diff main:cluster.yaml cluster.yaml -f markdown -o comment.md
      clusterforge cost cluster.yaml --catalog negotiated-prices.yaml -f markdown -o cost.md
      clusterforge cost cluster.yaml -f json | jq .usd_per_gpu_hour
      clusterforge cost onprem.yaml --idle-share 0.7 -f json | jq .saved_monthly_usd

    \b
    Exit codes: 0 estimated, 2 unreadable or invalid input (blueprint or price file, with file:line; a Site
    file in place of a blueprint is named as one, with the blueprints that include it).
    """
    from clusterforge.cli.site_file import refuse_site, refuse_site_sides

    if old is not None:
        refuse_site_sides(old, str(file), "cost --diff")
        _diff(old, str(file), PolicyInputs(tuple(catalog)), fmt, output, idle_share)
        return
    from clusterforge.cost import estimate_cost
    from clusterforge.pipeline.analysis import analyze, read_policy

    refuse_site(file, "cost")
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


def _diff(old: str, new: str, inputs: PolicyInputs, fmt: str, output: Path | None, idle_share: float | None) -> None:
    """`cost --diff OLD NEW`: both estimated with the same catalog, compared item by item (formats.cost_diff)."""
    from clusterforge.day2.cost_delta import estimated
    from clusterforge.formats import cost_diff

    diff = cost_diff.CostDiff(old, new, estimated(old, inputs, idle_share), estimated(new, inputs, idle_share))
    if fmt == "json":
        from clusterforge.formats import json_safe

        body = json.dumps(json_safe(diff.as_json()), indent=2) + "\n"
    elif fmt == "markdown":
        body = cost_diff.markdown(diff)
    else:
        from clusterforge.cli.terminal import width, wrap

        columns = width()
        body = "".join(piece + "\n" for line, indent in cost_diff.text(diff) for piece in wrap(line, columns, indent))
    if output is None:
        click.echo(body, nl=False)
        return
    from clusterforge.files.atomic import refuse_inputs, write_text

    refuse_inputs(output, [old, new, *inputs.files()])  # REV:PATH names no file here: skipped
    write_text(output, body)
    say(f"wrote {output}")
