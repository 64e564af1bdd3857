"""inventory/group_vars/all.yml: the cluster-wide settings roles read, named with each role's prefix; and
inventory/group_vars/pool_<name>.yml for a pool whose software differs from the cluster's (its vendor's in a cluster
of several vendors, or its own `software:` override), so each pool's nodes get their own pins: one file per such
pool, never per node.

Roles never recompute these: versions are the blueprint's pins, the SLURM files come from the render next
door (`slurm_config_dir`), and the fabric and storage flags say which hardware roles apply.

Every string is written `!unsafe` (yamlout.dump_ansible): values from the blueprint reach Ansible as data,
never as templates. `slurm_config_dir` is the one template clusterforge writes on purpose.
"""

from __future__ import annotations

from typing import Any

from clusterforge.accelerator_kernel import default, registered
from clusterforge.model import Account, Cluster, OnPremLustre, Qos, Rack
from clusterforge.physics.electrical import apparent_kva
from clusterforge.plan.model import Plan, RackLimits, SlurmPlan
from clusterforge.policies.domains.cooling import INLET_CLASS_MAX_C
from clusterforge.render.context import RenderContext
from clusterforge.render.inventory import pool_group
from clusterforge.render.inventory import pool_vars as inventory_pool_vars
from clusterforge.render.manifest import ByKey, VarKeys
from clusterforge.render.powersave_file import config as powersave_config
from clusterforge.render.slurm_conf import prolog_epilog
from clusterforge.render.yamlout import Template, dump_ansible
from clusterforge.target_kernel import blueprint_part, in_use, render_part
from clusterforge.target_kernel import registered as registered_targets

# What changing it takes on day two (clusterforge.render.manifest): each var as the role that reads it declares.
DAY_TWO = {"inventory/group_vars/all.yml": ByKey("vars"), "inventory/group_vars/pool_*.yml": ByKey("vars")}


def fabric_vars(cluster: Cluster) -> dict[str, Any]:
    fabric = cluster.fabric
    kind = fabric.kind if fabric is not None else "none"
    # RoCE runs on the same verbs stack as InfiniBand (rdma-core, the mlx5 provider): without it NCCL and RCCL fall
    # back to TCP sockets. The infiniband role installs it on both; opensm and IPoIB stay off without hosts for them.
    rdma = kind in ("infiniband", "roce")
    # each fabric only a target offers has its role, turned on by `<kind>_enabled` (day2.scope reads it too)
    own = {f"{exclusive}_enabled": kind == exclusive for target in registered_targets().values()
           for exclusive in blueprint_part(target).exclusive_fabrics}
    return {"fabric_kind": kind, "infiniband_enabled": rdma} | own


def target_pin_vars() -> dict[str, str]:
    """Each registered target's own pins (its `RenderPart.pin_vars`), by blueprint software field, with the role
    variable that installs it."""
    return {pin: var for target in registered_targets().values() for pin, var in render_part(target).pin_vars}


def pin_vars() -> dict[str, str]:
    """Every pin a role installs, by blueprint software field, with its role variable: the targets' and each
    accelerator vendor's."""
    return target_pin_vars() | {p.pin: p.var for vendor in registered().values() for p in vendor.pin_vars}


def software_vars(cluster: Cluster) -> dict[str, Any]:
    """The default vendor's pins (always written: the roles install its stack unless told otherwise), the
    targets' own pins and SLURM's."""
    pins = cluster.software.pins()
    return ({p.var: pins.get(p.pin) for p in default().pin_vars}
            | {var: pins.get(pin) for pin, var in target_pin_vars().items()}
            | {"slurm_version": cluster.software.slurm})


def cluster_vendor(plan: Plan) -> str:
    """The vendor all.yml names: the GPUs' when every GPU pool has one vendor, else the roles' default (NVIDIA);
    the pools of other vendors name theirs in their own group_vars file."""
    vendors = {pool.gpu_vendor for pool in plan.nodes if pool.gpu_count and pool.gpu_vendor}
    return vendors.pop() if len(vendors) == 1 else default().name


def accelerator_vars(cluster: Cluster, plan: Plan) -> dict[str, Any]:
    """The vendor of the cluster's GPUs (the catalog's gpus.vendor) when it is not the roles' default, and another
    vendor's pin variables where its GPUs are the cluster's, its stack is declared or its first pin is set (an unset
    pin is written ""): the hardware roles pick their software by the vendor (nvidia_driver and nccl on NVIDIA, rocm
    and RCCL's settings on AMD, neither on Trainium). Nothing is written for the default vendor's GPUs, so those
    clusters' files stay as they were."""
    vendor = cluster_vendor(plan)
    out: dict[str, Any] = {} if vendor == default().name else {"gpu_vendor": vendor}
    sw = cluster.software
    pins = sw.pins()
    for other in registered().values():
        if other.default or not other.pin_vars:
            continue
        if vendor == other.name or sw.stack == other.stack or (other.pins and other.pins[0] in pins):
            out |= {p.var: pins.get(p.pin) or "" for p in other.pin_vars}
    return out


def slurm_vars(cluster: Cluster, slurm: SlurmPlan) -> dict[str, Any]:
    spec = cluster.slurm
    accounting = spec.accounting.enabled and slurm.dbd_host is not None
    return {
        "slurm_cluster_name": slurm.cluster_name,
        "slurm_controller_host": slurm.controller,
        "slurm_config_dir": Template("{{ inventory_dir }}/../slurm"),
        "slurm_state_save_location": spec.state_save_location,
        "slurm_configless": spec.configless,
        "slurm_accounting_enabled": accounting,
        "slurm_dbd_host": slurm.dbd_host if accounting else "",
        "slurm_dbd_database": spec.accounting.database,
        "slurm_qos": [{"name": q.name, "options": qos_options(q)} for q in spec.qos] if accounting else [],
        "slurm_accounts": [{"name": a.name, "options": account_options(a), "users": list(a.users)}
                           for a in spec.accounts] if accounting else [],
        "slurm_prolog_epilog": prolog_epilog(cluster),
        "slurm_pam_slurm_adopt": spec.pam_slurm_adopt,
        "slurm_mpi": spec.mpi,
        "containers_enabled": spec.containers,
    }


def qos_options(qos: Qos) -> dict[str, str]:
    """`sacctmgr add/modify qos` options, as strings; an option the blueprint leaves out is not managed."""
    values = {"Description": qos.description, "Priority": qos.priority,
              "Preempt": ",".join(qos.preempt) if qos.preempt else None, "MaxWall": qos.max_wall,
              "GrpTRES": qos.grp_tres, "MaxTRESPerJob": qos.max_tres_per_job, "MaxTRESPerUser": qos.max_tres_per_user,
              "MaxJobsPerUser": qos.max_jobs_per_user, "MaxSubmitJobsPerUser": qos.max_submit_jobs_per_user}
    return {key: str(value) for key, value in values.items() if value is not None}


def account_options(account: Account) -> dict[str, str]:
    """`sacctmgr add/modify account` options, as strings (Description defaults to the name, as sacctmgr's)."""
    values = {"Description": account.description or account.name, "Organization": account.organization,
              "Fairshare": account.fairshare, "QOS": ",".join(account.qos) if account.qos else None,
              "DefaultQOS": account.default_qos}
    return {key: str(value) for key, value in values.items() if value is not None}


def operations_vars(cluster: Cluster, plan: Plan, slurm: SlurmPlan) -> dict[str, Any]:
    """Telemetry and alerts (roles/telemetry, roles/monitoring), the health check's prolog and epilog, and the
    remediation of drained nodes (roles/remediation). Prometheus runs on the first node of
    `operations.monitoring.pool`, else on the primary controller."""
    ops = cluster.operations
    monitoring = ops.monitoring
    pool = next((p for p in plan.nodes if p.pool == monitoring.pool), None)
    host = pool.name(1) if pool is not None and pool.count else (slurm.controller or "")
    return {
        "monitoring_enabled": monitoring.enabled and bool(host),
        "monitoring_host": host,
        "monitoring_scrape_interval_s": monitoring.scrape_interval_s,
        "monitoring_node_down_for_s": monitoring.node_down_for_s,
        "monitoring_retention_days": monitoring.retention_days,
        "monitoring_alert_webhooks": list(monitoring.alert_webhooks),
        "health_prolog_enabled": ops.health.prolog,
        "health_epilog_enabled": ops.health.epilog,
        "health_dcgm_diag_level": ops.health.dcgm_diag_level,
        "remediation_enabled": ops.remediation.enabled,
        "remediation_max_reboots": ops.remediation.max_reboots,
        "remediation_window_h": ops.remediation.window_h,
        "remediation_interval_s": ops.remediation.interval_s,
    }


# What Prometheus labels an elastic node's targets with, and whether it has a DCGM exporter: the pool vars the
# monitoring role reads for a static host (rack and row are per host, and a pool SLURM powers lists no host).
MONITORED_POOL_VARS = ("gpu_count", "gpu_vendor", "availability_zone", "placement_group")


def power_saved_pool_vars(ctx: RenderContext) -> dict[str, Any]:
    """`monitoring_power_saved_pools`, written when the power-save programs launch some pool: by group of the
    power-save file (the pool's name), the pool vars Prometheus's targets of its powered-up nodes are built from
    (roles/monitoring relabels the programs' file of powered-up nodes with them). O(pools), like that file."""
    made = powersave_config(ctx)
    if made is None:
        return {}
    names = {group.name for group in made.groups}
    pools: dict[str, Any] = {}
    for nodes in ctx.plan.nodes:
        if nodes.pool in names:
            own = inventory_pool_vars(nodes, ctx.plan) | ({"gpu_vendor": nodes.gpu_vendor} if nodes.gpu_count
                                                          and nodes.gpu_vendor else {})
            pools[nodes.pool] = {key: own[key] for key in MONITORED_POOL_VARS if own.get(key) is not None}
    return {"monitoring_power_saved_pools": pools}


def feed_budgets_w(rack: Rack, limits: RackLimits) -> dict[str, int]:
    """What each feed of the rack may carry (W): PWR-001's usable kW, S · PF · derate. The plan keeps no derating,
    only the rack's kW worked out with the gate's (`RackLimits.kw`, min(A side, B side, weakest feed × feeds), every
    term one feed's S times the same PF · derate), so the factor is that kW over the same minimum in kVA: the feeds
    get exactly the derating the gate used, whatever the policy config sets."""
    kva = [apparent_kva(f.voltage, f.amps, f.phase) for f in rack.feeds]
    sides = [sum(s for s, f in zip(kva, rack.feeds, strict=True) if f.side == side) for side in ("A", "B")]
    raw = min(*sides, min(kva) * len(kva))
    if raw <= 0:
        return {}
    factor = limits.kw / raw
    return {f.name: round(s * factor * 1000) for f, s in zip(rack.feeds, kva, strict=True)}


def power_budget_vars(cluster: Cluster, plan: Plan) -> dict[str, Any]:
    """`monitoring_power_budgets` (rack -> its budget in W and its feeds' budgets) and the site's inlet limit, the
    figures the gate holds the design to, for the alerts that compare them with what the BMCs read (roles/telemetry
    labels each node's draw with its rack and feeds). A rack's budget is the planner's and PWR-001/002's kW (either
    side alone carries it) or the rack's density contract (RCK-006) when that is lower. Only racks that hold nodes,
    and O(racks): every node of a rack shares its entry (the telemetry role looks its feeds up by its `rack`)."""
    site = cluster.site
    if site is None or not plan.limits:
        return {}
    with_nodes = {run.rack for pool in plan.nodes for run in pool.runs if run.rack is not None}
    blueprint = {rack.name: rack for _, _, _, rack in site.racks()}
    budgets: dict[str, Any] = {}
    for placed, limits in zip(plan.racks, plan.limits, strict=True):
        rack = blueprint[placed.name]
        if placed.name not in with_nodes or not rack.feeds:
            continue
        contract = rack.contracted_kw or site.contracted_kw_per_rack
        kw = min(limits.kw, contract) if contract is not None else limits.kw
        budgets[placed.name] = {"watts": round(kw * 1000), "feeds": feed_budgets_w(rack, limits)}
    out: dict[str, Any] = {"monitoring_power_budgets": budgets} if budgets else {}
    # CLG-005's figure: the hottest inlet air the room allows (max_inlet_c, else its ASHRAE class's allowable maximum)
    inlet = site.max_inlet_c if site.max_inlet_c is not None else (
        INLET_CLASS_MAX_C[site.inlet_class] if site.inlet_class is not None else None)
    if inlet is not None:
        out["monitoring_inlet_limit_celsius"] = float(inlet)
    return out


def common_shared_vars(cluster: Cluster) -> dict[str, Any]:
    """The shared file system the common role mounts ("" for a source that something else provides)."""
    shared = cluster.storage.shared
    return {"common_shared_enabled": shared is not None, "common_shared_mount": shared.mount if shared else "",
            "common_shared_source": (shared.source or "") if shared else "",
            "common_shared_options": shared.options if shared else ""}


def lustre_vars(cluster: Cluster) -> dict[str, Any]:
    lustre = cluster.storage.lustre
    if isinstance(lustre, OnPremLustre):
        return {"lustre_client_enabled": True, "lustre_client_kind": "onprem", "lustre_client_mount": lustre.mount,
                "lustre_client_mgs_nid": lustre.mgs_nid, "lustre_client_fsname": lustre.fsname,
                "lustre_client_mount_options": lustre.mount_options}
    if lustre is not None:  # a target's managed Lustre (typed as the existing form): its CLIENT_KIND says how
        return {"lustre_client_enabled": True, "lustre_client_kind": str(getattr(lustre, "CLIENT_KIND", "")),
                "lustre_client_mount": lustre.mount}
    return {"lustre_client_enabled": False}


def group_vars(ctx: RenderContext) -> dict[str, Any]:
    cluster = ctx.loaded.cluster
    slurm = ctx.plan.slurm
    assert slurm is not None
    out: dict[str, Any] = {"clusterforge_cluster": cluster.name,
                           # free text for people (the login banner): written !unsafe like every string here
                           "clusterforge_description": cluster.description or ""}
    for target in in_use(cluster):  # the targets' own (the region its nodes run in)
        out |= render_part(target).group_vars(cluster)
    return (out | fabric_vars(cluster) | software_vars(cluster) | accelerator_vars(cluster, ctx.plan)
            | slurm_vars(cluster, slurm) | lustre_vars(cluster) | common_shared_vars(cluster)
            | operations_vars(cluster, ctx.plan, slurm) | power_saved_pool_vars(ctx)
            | power_budget_vars(cluster, ctx.plan))


def pool_vars(ctx: RenderContext) -> dict[str, dict[str, Any]]:
    """Each pool's own software vars, by pool group: its GPUs' vendor where it is not the one all.yml names (a
    cluster of several vendors), and the role variables of the pins its `software:` override sets."""
    cluster = ctx.loaded.cluster
    vendor = cluster_vendor(ctx.plan)
    overrides = {pool.name: pool.software for pool in cluster.pools if pool.software is not None}
    variables = pin_vars()
    out: dict[str, dict[str, Any]] = {}
    for nodes in ctx.plan.nodes:
        own: dict[str, Any] = {}
        if nodes.gpu_count and nodes.gpu_vendor and nodes.gpu_vendor != vendor:
            own["gpu_vendor"] = nodes.gpu_vendor
        override = overrides.get(nodes.pool)
        if override is not None:
            own |= {variables[name]: value for name, value in override.pins().items() if name in variables}
        if own:
            out[pool_group(nodes.pool)] = own
    return out


def render(ctx: RenderContext) -> dict[str, str]:
    files = {"inventory/group_vars/all.yml": ctx.header() + dump_ansible(group_vars(ctx))}
    for group, own in pool_vars(ctx).items():
        files[f"inventory/group_vars/{group}.yml"] = ctx.header() + dump_ansible(own)
    return files


def day_two_keys(ctx: RenderContext) -> dict[str, VarKeys]:
    """The keys of the files this module writes, for the render manifest: all.yml's are cluster-wide, a pool
    group's file's apply to the pool's hosts."""
    keys = {"inventory/group_vars/all.yml": VarKeys(group=frozenset(group_vars(ctx)))}
    for group, own in pool_vars(ctx).items():
        keys[f"inventory/group_vars/{group}.yml"] = VarKeys(host=frozenset(own))
    return keys
