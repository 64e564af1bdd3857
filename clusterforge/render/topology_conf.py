"""topology.conf for topology/tree: leaves with their nodes, spines and cores with the switches below them."""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines


def render(ctx: RenderContext) -> dict[str, str]:
    slurm = ctx.plan.slurm
    if slurm is None or not slurm.switches:
        return {}
    lines: list[str] = []
    for switch in slurm.switches:
        if switch.leaves:
            lines.append(f"# {switch.name}: rail group on {switch.leaves} (its nodes have NICs on every one of them)")
        child = f"Nodes={switch.nodes}" if switch.nodes else f"Switches={switch.switches}"
        lines.append(f"SwitchName={switch.name} {child}")
    return {"slurm/topology.conf": ctx.header() + conf_lines(lines)}
