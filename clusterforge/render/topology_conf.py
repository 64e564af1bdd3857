"""topology.conf: for topology/block one BlockName per NVLink domain and the BlockSizes SLURM plans with; for
topology/tree SLURM's leaf level with its nodes, then the spines and cores compacted (plan/compact.py: one
switch per class of equivalent ones, a comment naming the switches each stands for). Values pass
`RenderContext.conf` like slurm.conf's."""

from __future__ import annotations

from clusterforge.plan.model import SlurmPlan
from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.manifest import RoleHandlers

# What changing it takes on day two (clusterforge.render.manifest): what the slurm role's handlers for it do.
DAY_TWO = {"slurm/topology.conf": RoleHandlers()}


def block_lines(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    """One block per NVLink domain: jobs that need the NVLink fabric stay inside one (or `--segment` of one)."""
    lines = [f"# {len(slurm.blocks)} {ctx.plan.domain_title()}(s): one block each; BlockSizes is the domain size, "
             "then the aggregates of adjacent blocks SLURM may use"]
    for block in slurm.blocks:
        lines.append(f"BlockName={ctx.conf(block.name, ('pools',))} Nodes={ctx.conf(block.nodes, ('pools',))}")
    lines.append("BlockSizes=" + ",".join(str(size) for size in slurm.block_sizes))
    return lines


def tree_lines(ctx: RenderContext, slurm: SlurmPlan) -> list[str]:
    lines: list[str] = []
    for switch in slurm.switches:
        name = ctx.conf(switch.name, "fabric (switch names)")
        if switch.leaves:
            leaves = ctx.conf(switch.leaves, "fabric (leaf names)")
            lines.append(f"# {name}: rail group on {leaves} (its nodes have NICs on every one of them)")
        elif switch.members:
            members = ctx.conf(switch.members, "fabric (switch names)")
            lines.append(f"# {name}: stands for {members} (any two nodes below it share one of them)")
        child = (f"Nodes={ctx.conf(switch.nodes, ('pools',))}" if switch.nodes
                 else f"Switches={ctx.conf(switch.switches, 'fabric (switch names)')}")
        lines.append(f"SwitchName={name} {child}")
    return lines


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    if slurm is None or slurm.topology_plugin is None:
        return {}
    lines = block_lines(ctx, slurm) if slurm.blocks else tree_lines(ctx, slurm)
    return {"slurm/topology.conf": ctx.header() + conf_lines(lines)}
