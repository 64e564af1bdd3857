"""`plan` and `render`: what the blueprint implies, and the files that stand it up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, catalog_option, format_option, input_files
from clusterforge.errors import ClusterforgeError, Problem, one_line

if TYPE_CHECKING:
    from clusterforge.aws.outputs import StackOutputs
    from clusterforge.load import Loaded
    from clusterforge.plan import Plan
    from clusterforge.policies.config import PolicyConfig

policy_config_option = click.option(
    "--policy-config", "policy_config", type=click.Path(path_type=Path, dir_okay=False),
    help="Policy configuration YAML (derating, cooling defaults, rule settings).")


def load_and_plan(file: Path, catalog: tuple[Path, ...], policy_config: Path | None,
                  controller_type: str | None = None) -> tuple[Loaded, PolicyConfig, Plan]:
    """Everything `plan` and `render` share; the engine is imported here so `--help` stays instant.

    An AWS cluster is planned as the stack builds it: without a controller pool it gets a SLURM controller
    of its own (`controller_type`, else the stack's default), so slurm.conf names the node the stack makes.
    """
    from clusterforge.aws.design import with_controller
    from clusterforge.aws.settings import DEFAULT_CONTROLLER_TYPE
    from clusterforge.catalog import load_catalog
    from clusterforge.load import load_blueprint
    from clusterforge.plan import build_plan
    from clusterforge.policies.config import load_policy_config

    loaded = load_blueprint(file, load_catalog(catalog))
    config = load_policy_config(policy_config)
    cluster = loaded.cluster
    if cluster.target == "aws":
        cluster, _ = with_controller(cluster, controller_type or DEFAULT_CONTROLLER_TYPE)
    return loaded, config, build_plan(cluster, loaded.catalog, config)


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@format_option("text", "json")
@catalog_option
@policy_config_option
def plan(file: Path, fmt: str, catalog: tuple[Path, ...], policy_config: Path | None) -> None:
    """Show what blueprint FILE implies: rack placement with U/kW/kg use, the fabric's bill of materials
    (tiers, switches, ports, cables) and the node names per pool.

    Pools without explicit rack placements are placed by the planner (first-fit decreasing within every
    rack's U, A/B power, weight, floor and cooling limits); what fits nowhere is listed as unplaced.
    """
    loaded, _, result = load_and_plan(file, catalog, policy_config)
    if fmt == "json":
        from clusterforge.plan.export import plan_dict

        data = {"cluster": loaded.cluster.name, "target": loaded.cluster.target, **plan_dict(result)}
        click.echo(json.dumps(data, indent=2))
        return
    from clusterforge.cli.plan_view import show

    show(loaded.cluster, result)


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--output", "-o", "out", required=True, type=click.Path(path_type=Path),
              help="Directory to write (replaced as a whole; created when missing).")
@click.option("--force", is_flag=True, help="Render even when the policy check reports errors.")
@catalog_option
@policy_config_option
@click.option("--waivers", type=click.Path(path_type=Path, dir_okay=False), help="Waivers YAML for the check.")
@click.option("--from-stack", "from_stack", type=click.Path(path_type=Path, dir_okay=False),
              help="`pulumi stack output --json` of the deployed AWS stack: each host gets its address.")
def render(file: Path, out: Path, force: bool, catalog: tuple[Path, ...], policy_config: Path | None,
           waivers: Path | None, from_stack: Path | None) -> None:
    """Write the Ansible inventory, SLURM configs and (aws) the Pulumi stack config for blueprint FILE.

    \b
    OUT/inventory/hosts.yml, OUT/inventory/group_vars/all.yml
    OUT/slurm/slurm.conf, gres.conf, cgroup.conf, topology.conf (switched fabrics)
    OUT/pulumi/Pulumi.<cluster>.yaml (target aws)

    With --from-stack (target aws, after `pulumi up`), the inventory also carries every host's private IP and
    instance id, the controller's address and where FSx is mounted from.

    Refuses (exit 1) while the policy check has unwaived errors, unless --force. OUT is replaced only when
    every file is written: a failed render leaves it as it was.
    """
    from clusterforge.atomic import refuse_inputs
    from clusterforge.policies import evaluate, load_waivers
    from clusterforge.render import RenderContext, write

    waiver_list = load_waivers(waivers)
    stack = _stack_outputs(from_stack)
    loaded, config, result = load_and_plan(file, catalog, policy_config, stack.controller_type if stack else None)
    if stack is not None and stack.cluster != loaded.cluster.name:
        raise ClusterforgeError(Problem(f"the stack outputs are of cluster {stack.cluster}, the blueprint is "
                                        f"{loaded.cluster.name}", str(from_stack), hint="export the right stack"))
    refuse_inputs(out, input_files([loaded.source], file, *catalog, policy_config, waivers, from_stack), directory=True)
    verdict = evaluate(loaded, result, config, waiver_list)
    if verdict.failed:
        errors = verdict.errors
        click.echo(one_line(f"{file}: the policy check has {len(errors)} unwaived error(s):"), err=True)
        for finding in errors:
            click.echo(f"  {finding.render()}", err=True)
        if not force:
            click.echo("render refused: fix the design, waive the findings (--waivers) or use --force", err=True)
            raise click.exceptions.Exit(EXIT_POLICY)
        click.echo("rendering anyway (--force)", err=True)
    written = write(RenderContext(loaded, result, Path.cwd() / "stacks" / "aws", stack), out)
    click.echo(one_line(f"wrote {len(written)} files to {out}"), err=True)


def _stack_outputs(path: Path | None) -> StackOutputs | None:
    if path is None:
        return None
    from clusterforge.aws.inventory import read_outputs

    return read_outputs(path)
