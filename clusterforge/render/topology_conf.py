"""topology.conf for topology/tree: SLURM's leaf level with its nodes, then the spines and cores compacted
(plan/compact.py: one switch per class of equivalent ones, a comment naming the switches each stands for);
values pass `RenderContext.conf` like slurm.conf's."""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    if slurm is None or not slurm.switches:
        return {}
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
    return {"slurm/topology.conf": ctx.header() + conf_lines(lines)}
