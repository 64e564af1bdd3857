"""`plan` and `render`: what the blueprint implies, and the files that stand it up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option, input_files, policy_options, say
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.formats.escape import plural
from clusterforge.pipeline.analysis import PolicyInputs

if TYPE_CHECKING:
    from clusterforge.policies.engine import Verdict

def _verdict_line(verdict: Verdict) -> str:
    state = "FAIL" if verdict.failed else "PASS"
    return (f"check: {state} ({plural(verdict.count('error'), 'error')}, "
            f"{plural(verdict.count('warning'), 'warning')}, {len(verdict.waived)} waived)")


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@format_option("text", "json")
@policy_options
def plan(file: Path, fmt: str, inputs: PolicyInputs) -> None:
    """Show what blueprint FILE implies: rack placement with U/kW/kg use, the fabric's bill of materials
    (tiers, switches, ports, cables) and the node names per pool, with the policy verdict on it.

    Pools without explicit rack placements are placed by the planner (first-fit decreasing within every
    rack's U, A/B power, weight, floor and cooling limits); what fits nowhere is listed as unplaced. The fabric's
    switches are racked after them, in the racks marked `role: network` or else in the room the pools leave;
    those that fit nowhere are listed too (RCK-007 warns; a site file may leave its network racks out, so
    they do not change the exit code).

    \b
    Exit codes: 0 the planner can build it (see `check` for the policy verdict),
    1 it cannot: a fabric beyond its switches' capacity, or nodes that fit in no rack
    (the plan is still printed, with the reasons), 2 invalid input.
    """
    from clusterforge.cli.site_file import refuse_site
    from clusterforge.pipeline.analysis import analyze, read_policy

    refuse_site(file, "plan")
    result = analyze(file, read_policy(inputs))
    infeasible = result.plan.infeasible()
    if fmt == "json":
        from clusterforge.formats import json_safe
        from clusterforge.formats.json_format import verdict_data
        from clusterforge.plan.export import plan_dict

        data = {"cluster": result.loaded.cluster.name, "target": result.loaded.cluster.target,
                **plan_dict(result.plan), "infeasible": infeasible, "check": verdict_data(result.verdict)}
        click.echo(json.dumps(json_safe(data), indent=2))
    else:
        from clusterforge.cli.plan_view import show

        show(result.loaded.cluster, result.plan)
        click.echo(_verdict_line(result.verdict))
    if infeasible:
        for reason in infeasible:
            say(f"{file}: cannot be built: {reason}")
        raise click.exceptions.Exit(EXIT_POLICY)


@app.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--output", "-o", "out", required=True, type=click.Path(path_type=Path),
              help="Directory to write (replaced as a whole; created when missing).")
@click.option("--force", is_flag=True, help="Render even when the policy check reports errors.")
@policy_options
@click.option("--from-outputs", "--from-stack", "from_outputs", type=click.Path(path_type=Path, dir_okay=False),
              help="What the deployment reported (a Pulumi stack: `pulumi stack output --json` saved to a file), read "
                   "by the cluster's target: each host gets its address. --from-stack is the older name.")
@click.option("--macs", "macs_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Each node's MACs as `clusterforge power inventory` wrote them: the first is bound to the node's "
                   "address in provisioning/dhcp-hosts and nodes.conf (a site with `site.networks`).")
def render(file: Path, out: Path, force: bool, inputs: PolicyInputs, from_outputs: Path | None,
           macs_file: Path | None) -> None:
    """Write the Ansible inventory, SLURM configs and (aws) the Pulumi stack config for blueprint FILE.

    \b
    OUT/inventory/hosts.yml, OUT/inventory/group_vars/all.yml
    OUT/slurm/slurm.conf, gres.conf, cgroup.conf, topology.conf (switched fabrics)
    OUT/pulumi/Pulumi.<cluster>.yaml (target aws)
    OUT/provisioning/hosts, addresses.txt, dhcp-hosts, bmcs.yaml, nodes.conf (a site with `site.networks`)

    With --from-outputs (target aws: after `pulumi up`), the inventory also carries what the deployment reports:
    on AWS every host's private IP and instance id, the controller's address and where FSx is mounted from.

    Refuses (exit 1) while the policy check has unwaived errors, unless --force. OUT is replaced only when
    every file is written: a failed render leaves it as it was.
    """
    from clusterforge.cli.site_file import refuse_site
    from clusterforge.files.atomic import refuse_inputs
    from clusterforge.pipeline.analysis import analyze, load, read_policy
    from clusterforge.render import RenderContext, write
    from clusterforge.target_kernel import in_use, outputs_reader, project_dir

    refuse_site(file, "render")
    policy = read_policy(inputs)
    loaded = load(file, policy)
    stack = None
    if from_outputs is not None:  # read by the cluster's own target, before planning: it names the controller built
        stack = outputs_reader(in_use(loaded.cluster)).file(from_outputs)
        if stack.cluster != loaded.cluster.name:
            raise ClusterforgeError(Problem(f"the deployment outputs are of cluster {stack.cluster}, the blueprint "
                                            f"is {loaded.cluster.name}", str(from_outputs),
                                            hint="export the outputs of this cluster's deployment"))
    result = analyze(loaded, policy, controller_type=stack.controller_type if stack else None)
    verdict = result.verdict
    refuse_inputs(out, input_files([loaded.source], file, *inputs.files(), from_outputs, macs_file), directory=True)
    if verdict.failed:
        show_policy_errors(file, verdict)
        if not force:
            click.echo("render refused: fix the design, waive the findings (--waivers) or use --force", err=True)
            raise click.exceptions.Exit(EXIT_POLICY)
        click.echo("rendering anyway (--force)", err=True)
    macs = {}
    if macs_file is not None:
        from clusterforge.bmc.inventory import boot_macs

        macs = boot_macs(macs_file, {name for pool in result.plan.nodes for name in pool.names()})
    written = write(RenderContext(loaded, result.plan, project_dir(loaded.cluster), stack, macs), out)
    say(f"wrote {len(written)} files to {out}")


def show_policy_errors(file: Path, verdict: Verdict) -> None:
    """The unwaived errors that stop a render (or an update) from writing a design the gate rejects."""
    from dataclasses import replace

    from clusterforge.files.paths import report_path
    from clusterforge.formats.escape import log_line

    errors = verdict.errors
    say(f"{file}: the policy check has {len(errors)} unwaived error(s):")
    for finding in errors:  # indented after log_line: a file named `::x` reads `  ./::x:3: ...`, never a command
        click.echo("  " + log_line(replace(finding, file=report_path(finding.file)).render()), err=True)
