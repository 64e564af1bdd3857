"""inventory/hosts.yml: groups per SLURM role and per pool, with what each host needs (rack, rails, GPUs).

Groups: `slurm_controller` (the SlurmctldHosts, primary first), `slurm_compute` and `slurm_login` (their pools
as children), and `pool_<name>` (dashes become underscores, which Ansible group names require). Facts shared by
a pool (GPU count and model, GRES, EFA, IMEX) are the pool group's vars; rack, position, rails and the NVLink
domain of a rack-scale system's tray are per host.
A pool slurmctld launches (the plan's `PowerSavePlan.launched`) keeps its group and vars (with `power_saved: true`)
but lists no host: its nodes exist only while powered up, configure themselves at boot and have no address until
then, so nothing here could reach them. With a deployment's outputs (`render --from-outputs`), the target overlays each
host's address and the facts its deployment reports. Every string is written `!unsafe` (yamlout.dump_ansible):
catalog and deployed values reach Ansible as data, never as templates.
"""

from __future__ import annotations

from typing import Any

from clusterforge.accelerator_kernel import accelerator
from clusterforge.plan.model import Plan, PoolNodes
from clusterforge.render.change_effects import Action, Effect
from clusterforge.render.context import RenderContext
from clusterforge.render.manifest import ByKey, VarKeys
from clusterforge.render.power_save import plan_of
from clusterforge.render.yamlout import dump_ansible

HOSTS_FILE = "inventory/hosts.yml"
# What changing it takes on day two (clusterforge.render.manifest): each var as the role that reads it declares,
# and a host joining, leaving or moving between groups as follows. Joining or leaving the controllers starts or
# stops slurmctld there; any other group changes which roles apply to it.
DAY_TWO = {HOSTS_FILE: ByKey("vars", membership={
    "added": Effect(Action.NONE, "changed", "new node: provisioned, then `scontrol reconfigure` adds it"),
    "removed": Effect(Action.DRAIN, "changed", "drained first (its jobs finish or are requeued), then removed"),
    "groups": Effect(Action.DRAIN, "changed", "its role changes: other roles apply to it"),
    "groups-controller": Effect(Action.RESTART, "changed", "slurmctld starts or stops on it", "slurmctld"),
    "hardware": Effect(Action.REIMAGE, "changed", "another catalog entry: the node is replaced"),
})}


def pool_group(pool: str) -> str:
    return "pool_" + pool.replace("-", "_")


def pool_vars(pool: PoolNodes, plan: Plan) -> dict[str, Any]:
    slurm = plan.slurm
    gres = next((n.gres for n in slurm.nodes if n.pool == pool.pool), None) if slurm else None
    out: dict[str, Any] = {"gpu_count": pool.gpu_count, "gpu_model": pool.gpu_model, "gres": gres,
                           "fabric_nics": pool.fabric_nics}
    if pool.fabric_nic_gbps:
        out["fabric_nic_gbps"] = pool.fabric_nic_gbps
    if pool.domain_size > 1:
        out["imex_enabled"] = True
    return out | dict(pool.target_vars)


def pool_hosts(pool: PoolNodes, plan: Plan) -> dict[str, Any]:
    rails = plan.topology.rails if plan.topology else {}
    domain = {node: name for name, nodes in pool.domains for node in nodes}
    domain_var = accelerator(pool.gpu_vendor).domain_var
    hosts: dict[str, Any] = {}
    for run in pool.runs:
        for offset in range(run.count):
            name = pool.name(run.first + offset)
            host: dict[str, Any] = {}
            if run.rack is not None:
                host |= {"rack": run.rack, "row": run.row}
                position = run.positions[offset] if offset < len(run.positions) else None
                if position is not None:
                    host["rack_position"] = position
            if name in rails:
                host["rails"] = list(rails[name])
            if name in domain:  # the trays of one rack-scale device: one domain (roles/imex for NVIDIA's)
                host[domain_var] = domain[name]
            hosts[name] = host
    return hosts


def controllers(plan: Plan) -> tuple[str, ...]:
    """The SlurmctldHost nodes, primary first (the order HA's `SlurmctldHost` lines and roles rely on)."""
    slurm = plan.slurm
    if slurm is None:
        return ()
    return slurm.controllers or ((slurm.controller,) if slurm.controller else ())


def inventory(plan: Plan, self_joining: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`self_joining`: the pools whose hosts are left out (slurmctld launches them)."""
    hosts = controllers(plan)
    by_role: dict[str, dict[str, Any]] = {"compute": {}, "login": {}}
    for pool in plan.nodes:
        if pool.role in by_role:
            by_role[pool.role][pool_group(pool.pool)] = {}
    groups: dict[str, Any] = {
        "slurm_controller": {"hosts": {host: {} for host in hosts}} if hosts else {},
        "slurm_compute": {"children": by_role["compute"]} if by_role["compute"] else {},
        "slurm_login": {"children": by_role["login"]} if by_role["login"] else {},
    }
    for pool in plan.nodes:
        group: dict[str, Any] = {"vars": pool_vars(pool, plan)}
        if pool.pool not in self_joining:
            group["hosts"] = pool_hosts(pool, plan)
        else:  # its nodes are up only while SLURM has them powered up: a powered-down one is not a failure
            group["vars"]["power_saved"] = True
        groups[pool_group(pool.pool)] = group
    return {"all": {"children": groups}}


def _data(ctx: RenderContext) -> dict[str, Any]:
    hosts = inventory(ctx.plan, frozenset(plan_of(ctx).launched))
    return ctx.outputs.overlay(hosts) if ctx.outputs is not None else hosts


def render(ctx: RenderContext) -> dict[str, str]:
    return {HOSTS_FILE: ctx.header() + dump_ansible(_data(ctx))}


def var_keys(data: dict[str, Any]) -> VarKeys:
    """The keys an inventory writes: its `all` vars (cluster-wide), and its groups' and hosts' vars (per pool or
    host), each key once however many hosts carry it."""
    top = data.get("all") or {}
    host: set[str] = set()
    for group in (top.get("children") or {}).values():
        if isinstance(group, dict):
            host.update(group.get("vars") or {})
            for own in (group.get("hosts") or {}).values():
                host.update(own or {})
    return VarKeys(frozenset(top.get("vars") or {}), frozenset(host))


def day_two_keys(ctx: RenderContext) -> dict[str, VarKeys]:
    """The keys of the file this module writes, for the render manifest."""
    return {HOSTS_FILE: var_keys(_data(ctx))}
