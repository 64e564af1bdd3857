"""What a change to each rendered setting means for running work: a table of data, each entry with its reason.

slurm.conf keys take the class SLURM 24.11's man pages state (catalog/data/slurm-changes.yaml, each row with its
sentence): a reconfigure unless the page says otherwise. The slurm role is the source for its other files:
`slurm_notify` (roles/slurm/vars/main.yml) names the handler each rendered file notifies, read from the role when
a diff is made; and a key in its `slurm_restart_keys` is at least a restart, since that is what the role does
with it. Everything else is the tables below and each target's own (`Target.effects`: its vars, the facts its
deployment reports and its config file's keys); a key they do not list is treated as needing idle nodes.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from clusterforge import accelerators
from clusterforge.catalog.slurm_changes import Daemon, changes
from clusterforge.errors import ClusterforgeError, Problem


class Action(enum.IntEnum):
    """What applying a change takes on a node, least disruptive first."""

    NONE = 0  # nothing to do on running nodes (accounting objects through sacctmgr, monitoring config)
    RECONFIGURE = 1  # `scontrol reconfigure`: slurmctld re-executes itself in place (SLURM 24.11), jobs untouched
    RESTART = 2  # a daemon restart (slurmd, slurmctld, slurmdbd): running jobs keep running
    DRAIN = 3  # the node must be idle while it changes (libraries jobs load): drain, apply, resume
    REBOOT = 4  # drain, apply, reboot (kernel modules, drivers), health-check, resume
    REIMAGE = 5  # the node is replaced (other hardware or instance type): drain, then re-provision
    LOSE_JOBS = 6  # queued or running jobs are lost (SelectType, SwitchType): drain the whole cluster first


@dataclass(frozen=True)
class VendorGpus:
    """The hosts with GPUs of one accelerator vendor (clusterforge/accelerators): where its driver changes apply."""

    vendor: str


# Which hosts act, resolved on the new render (diff.py): "changed" is the hosts whose own value changed.
Hosts = Literal["none", "all", "controllers", "compute", "dbd", "gpu", "efa", "changed"] | VendorGpus


@dataclass(frozen=True)
class Effect:
    """One entry of the table: the action, where it applies, the daemon it restarts, and why."""

    action: Action
    hosts: Hosts
    why: str
    daemon: str | None = None


def _one(action: Action, hosts: Hosts, why: str, daemon: str | None = None) -> tuple[Effect, ...]:
    return (Effect(action, hosts, why, daemon),)


def _every_daemon(why: str) -> tuple[Effect, ...]:
    """A restart of every SLURM daemon in SLURM's upgrade order: slurmdbd, then slurmctld, then slurmd."""
    return (Effect(Action.RESTART, "dbd", why, "slurmdbd"), Effect(Action.RESTART, "controllers", why, "slurmctld"),
            Effect(Action.RESTART, "compute", why, "slurmd"))


def _vendor_pins() -> dict[str, tuple[Effect, ...]]:
    """Each accelerator vendor's pin variables, as its declaration says: a kernel module reboots the hosts with its
    GPUs, a library jobs load drains the GPU hosts while it is replaced."""
    return {pin.var: _one(Action.REBOOT, VendorGpus(vendor.name), pin.why) if pin.reboot
            else _one(Action.DRAIN, "gpu", pin.why)
            for vendor in accelerators.registered().values() for pin in vendor.pin_vars}


UNCLASSIFIED = Effect(Action.DRAIN, "all", "not classified: treated as needing idle nodes")

_FOLLOWS = "written to slurm.conf as well ({}) and classified there"
_SACCTMGR = "applied live with sacctmgr: no daemon restarts, running jobs untouched"
_OWN_SERVICE = "a service of its own (exporters, Prometheus, the health check, remediation): no job impact"
_LUSTRE = "the Lustre client's kernel modules and mount: jobs read and write through them"

# inventory/group_vars/all.yml, by key (clusterforge/render/group_vars.py writes every one of them), and the
# cluster-wide vars a deployed AWS stack adds to hosts.yml (targets/aws/inventory.py cluster_vars)
GROUP_VARS: dict[str, tuple[Effect, ...]] = {
    "clusterforge_cluster": _every_daemon(
        "names the munge key and slurmdbd password kept on the control host: a new name makes a new munge key, "
        "which every daemon restarts with"),
    "clusterforge_description": _one(Action.NONE, "all", "the login banner (motd)"),
    "fabric_kind": _one(Action.REBOOT, "compute", "another fabric stack: its kernel modules load at boot"),
    "infiniband_enabled": _one(Action.REBOOT, "compute", "the RDMA stack's kernel modules are installed or removed"),
    "efa_enabled": _one(Action.REBOOT, "compute", "the EFA kernel module is installed or removed"),
    **_vendor_pins(),
    "efa_installer_version": _one(Action.REBOOT, "efa",
                                  "the EFA kernel module and libfabric are replaced: a reboot loads the module"),
    "efa_aws_ofi_nccl_version": _one(Action.DRAIN, "gpu", "jobs load the NCCL plugin: replaced while none runs"),
    "gpu_vendor": _one(Action.REIMAGE, "gpu", "GPUs of another vendor: other hardware"),
    "slurm_version": _every_daemon("a SLURM upgrade: slurmdbd, then slurmctld, then slurmd (SLURM's upgrade "
                                   "order); running jobs survive a restart within the supported versions"),
    "slurm_cluster_name": _one(Action.NONE, "none", _FOLLOWS.format("ClusterName")),
    "slurm_controller_host": _one(Action.NONE, "none", _FOLLOWS.format("SlurmctldHost")),
    "slurm_controller_addr": _one(Action.RESTART, "compute", "slurmd finds the controller at this address (and a "
                                  "configless slurmd fetches its config from it) when it starts", "slurmd"),
    "slurm_config_dir": _one(Action.NONE, "none", "where Ansible reads the rendered files on the control host"),
    "slurm_state_save_location": _one(Action.NONE, "none", _FOLLOWS.format("StateSaveLocation")),
    "slurm_configless": (
        Effect(Action.RESTART, "controllers", "where slurmd reads its config is decided at start", "slurmctld"),
        Effect(Action.RESTART, "compute", "where slurmd reads its config is decided at start", "slurmd")),
    "slurm_accounting_enabled": _one(Action.RESTART, "dbd", "slurmdbd and its database start or stop; slurm.conf's "
                                     "accounting lines are classified there", "slurmdbd"),
    "slurm_dbd_host": _one(Action.RESTART, "dbd", "slurmdbd moves to another host; jobs keep running", "slurmdbd"),
    "slurm_dbd_database": _one(Action.RESTART, "dbd", "slurmdbd opens its database when it starts", "slurmdbd"),
    "slurm_qos": _one(Action.NONE, "none", _SACCTMGR),
    "slurm_accounts": _one(Action.NONE, "none", _SACCTMGR),
    "slurm_prolog_epilog": _one(Action.NONE, "compute", "the prolog.d and epilog.d scripts are installed in place; "
                                "a job runs those present when it starts"),
    "slurm_pam_slurm_adopt": _one(Action.NONE, "compute", "PAM's configuration for ssh: new logins only"),
    "slurm_mpi": _one(Action.DRAIN, "compute", "PMIx and OpenMPI are installed or removed: job steps load them"),
    "containers_enabled": _one(Action.DRAIN, "compute",
                               "enroot and pyxis are installed or removed: job steps load the SPANK plugin"),
    "clusterforge_checkpoint_bucket": _one(Action.NONE, "none", "read by jobs when they start"),
}

# Families of group vars, by prefix: the first that matches a key the table above does not list
GROUP_VAR_PREFIXES: tuple[tuple[str, tuple[Effect, ...]], ...] = (
    ("lustre_client_", _one(Action.REBOOT, "all", _LUSTRE)),
    ("common_shared_", _one(Action.DRAIN, "all", "the shared file system is remounted: jobs that use it must not run")),
    ("monitoring_", _one(Action.NONE, "all", _OWN_SERVICE)),
    ("alert", _one(Action.NONE, "all", _OWN_SERVICE)),
    ("telemetry_", _one(Action.NONE, "all", _OWN_SERVICE)),
    ("health_", _one(Action.NONE, "all", _OWN_SERVICE)),
    ("remediation_", _one(Action.NONE, "all", _OWN_SERVICE)),
    ("ansible_", _one(Action.NONE, "none", "how Ansible reaches the hosts")),
)

_HARDWARE = "other hardware: the node is replaced"
# inventory/hosts.yml: a host's vars, its pool group's and its own (render/inventory.py, and the addresses a
# deployed AWS stack adds in targets/aws/inventory.py host_vars)
HOST_VARS: dict[str, Effect] = {
    **{key: Effect(Action.REIMAGE, "changed", _HARDWARE) for key in (
        "gpu_count", "gpu_model", "gres", "fabric_nics", "fabric_nic_gbps", "efa_interfaces", "imex_enabled",
        "instance_type", "aws_instance_type")},
    "placement_group": Effect(Action.REIMAGE, "changed", "an instance changes placement group only by being replaced"),
    "availability_zone": Effect(Action.REIMAGE, "changed", "an instance changes zone only by being replaced"),
    "aws_instance_id": Effect(Action.REIMAGE, "changed", "another instance: it is provisioned from the start"),
    **{key: Effect(Action.REIMAGE, "changed", "the server moves: powered off, moved and provisioned again")
       for key in ("rack", "row", "rack_position")},
    # No role reads `rails`; topology.conf carries what SLURM schedules by (a RECONFIGURE of its own). The planner
    # deals NICs to leaves anew when the fabric grows, so a node added can move others' entries.
    "rails": Effect(Action.NONE, "changed", "the cabling plan: no role reads it, topology.conf carries the change; "
                    "re-cabling a node to follow it is done with the node drained"),
    "nvlink_domain": Effect(Action.DRAIN, "changed", "IMEX restarts with the new domain's nodes, and jobs' "
                            "NVLink memory imports go with it"),
    "ansible_host": Effect(Action.NONE, "changed", "how Ansible reaches the host"),
}
HOST_VAR_PREFIXES: tuple[tuple[str, Effect], ...] = (
    ("ansible_", Effect(Action.NONE, "changed", "how Ansible reaches the host")),
)
# A host's groups: joining or leaving the controllers starts or stops slurmctld there; any other group changes
# which roles apply to it.
CONTROLLER_GROUP = "slurm_controller"
COMPUTE_GROUP = "slurm_compute"
GROUPS_CONTROLLER = Effect(Action.RESTART, "changed", "slurmctld starts or stops on it", "slurmctld")
GROUPS_OTHER = Effect(Action.DRAIN, "changed", "its role changes: other roles apply to it")
HOST_ADDED = Effect(Action.NONE, "changed", "new node: provisioned, then `scontrol reconfigure` adds it")
HOST_REMOVED = Effect(Action.DRAIN, "changed", "drained first (its jobs finish or are requeued), then removed")
HARDWARE_CHANGED = Effect(Action.REIMAGE, "changed", "another catalog entry: the node is replaced")


@dataclass(frozen=True)
class TargetEffects:
    """A target's own keys and what changing each takes, declared in its package (`Target.effects`), so that
    nothing here names a target: its cluster-wide vars, the facts its deployment adds to hosts.yml (compared only
    when both renders have them: a render without the deployment's outputs says nothing about addresses), and
    the keys of the config file it renders (None: a key that is not a setting)."""

    group_vars: Mapping[str, tuple[Effect, ...]] = field(default_factory=dict)
    facts: frozenset[str] = frozenset()
    config: Callable[[str], Effect | None] | None = None


@lru_cache(maxsize=1)
def target_effects() -> tuple[TargetEffects, ...]:
    """Every registered target's table (read once, when a diff is first made)."""
    from clusterforge.targets import registered

    return tuple(target.effects() for target in registered().values() if target.effects is not None)


@lru_cache(maxsize=1)
def deployed_facts() -> frozenset[str]:
    """The facts any target's deployment adds to hosts.yml."""
    return frozenset().union(*(table.facts for table in target_effects()))


# slurm.conf: keys of the lines that name an object (`PartitionName=debug ...`), keyed with the name
NAMED_LINES = frozenset({"partitionname", "nodeset", "switchname", "blockname", "frontendname", "downnodes"})
NODE_JOINS = Effect(Action.RECONFIGURE, "controllers", "nodes join or leave slurm.conf: `scontrol reconfigure` "
                    "(SLURM 24.11 adds and removes nodes without a restart)", "slurmctld")
NODE_FILE_CHANGED = Effect(Action.RESTART, "changed", "slurmd reads its node's lines of gres.conf and the other files "
                           "when it starts", "slurmd")
_ROLE_RESTARTS = "the slurm role restarts the daemons for it (slurm_restart_keys)"
ROLE_RESTART = (Effect(Action.RESTART, "controllers", _ROLE_RESTARTS, "slurmctld"),
                Effect(Action.RESTART, "compute", _ROLE_RESTARTS, "slurmd"))
_ACTIONS = {"reconfigure": Action.RECONFIGURE, "restart": Action.RESTART, "drain": Action.DRAIN,
            "lose_jobs": Action.LOSE_JOBS}
_DAEMON_HOSTS: dict[Daemon, Hosts] = {"slurmctld": "controllers", "slurmd": "compute", "slurmdbd": "dbd"}


def slurm_conf_effects(key: str, old: str | None = None, new: str | None = None) -> tuple[Effect, ...]:
    """A changed slurm.conf entry as the table of slurm.conf(5) classes it (`SlurmctldHost#2`: the key's second
    line): a reconfigure on the controllers, else the action on the hosts of each daemon it restarts."""
    row = changes().row(key.split("#", 1)[0]).for_values(old, new)
    action = _ACTIONS[row.action]
    if action == Action.RECONFIGURE:
        return (Effect(action, "controllers", row.cited, "slurmctld"),)
    if not row.daemons:
        return (Effect(action, "compute" if action == Action.DRAIN else "all", row.cited),)
    return tuple(Effect(action, "compute" if action == Action.DRAIN else _DAEMON_HOSTS[daemon], row.cited, daemon)
                 for daemon in row.daemons)


def node_changed() -> Effect:
    """A node's own NodeName line changed (CPUs, RealMemory, Gres): slurm.conf(5) NODE CONFIGURATION's class."""
    row = changes().nodes
    return Effect(_ACTIONS[row.action], "controllers", row.cited, "slurmctld")

# The slurm role's handlers (roles/slurm/handlers), as slurm_notify names them
HANDLERS: dict[str, tuple[Effect, ...]] = {
    "reconfigure slurm": _one(Action.RECONFIGURE, "controllers", "`scontrol reconfigure` re-reads it; running jobs "
                              "are not touched", "slurmctld"),
    "restart slurmd": _one(Action.RESTART, "compute", "slurmd reads it when it starts; running jobs keep running",
                           "slurmd"),
    "restart slurmctld": _one(Action.RESTART, "controllers", "slurmctld reads it when it starts", "slurmctld"),
    "restart slurmdbd": _one(Action.RESTART, "dbd", "slurmdbd reads it when it starts", "slurmdbd"),
}

UNKNOWN_FILE = Effect(Action.DRAIN, "all", "not classified: treated as needing idle nodes")


def group_var_effects(key: str) -> tuple[Effect, ...]:
    """The table's entry for a group var, its family's, or UNCLASSIFIED."""
    if key in GROUP_VARS:
        return GROUP_VARS[key]
    own = next((table.group_vars[key] for table in target_effects() if key in table.group_vars), None)
    if own is not None:
        return own
    return next((effects for prefix, effects in GROUP_VAR_PREFIXES if key.startswith(prefix)), (UNCLASSIFIED,))


def host_var_effect(key: str) -> Effect:
    """The table's entry for a host or pool var, its family's, or UNCLASSIFIED for the hosts that changed."""
    if key in HOST_VARS:
        return HOST_VARS[key]
    fallback = Effect(Action.DRAIN, "changed", UNCLASSIFIED.why)
    return next((effect for prefix, effect in HOST_VAR_PREFIXES if key.startswith(prefix)), fallback)


def pulumi_effect(key: str) -> Effect | None:
    """A key of the deployment config a target renders (the stack config), as the target classes it; None for
    a key that is not a setting."""
    config = next((table.config for table in target_effects() if table.config is not None), None)
    return config(key) if config is not None else UNCLASSIFIED


# ---------------------------------------------------------------------------------------------------------------
# The slurm role's own lists, read at run time


@dataclass(frozen=True)
class SlurmRole:
    """What the slurm role says about its files: the restart keys (lowercase: SLURM's keys ignore case) and the
    handlers each rendered file notifies."""

    restart_keys: frozenset[str]
    notify: dict[str, tuple[str, ...]]

    def conf_effects(self, file: str, key: str, old: str | None = None, new: str | None = None) -> tuple[Effect, ...]:
        """A changed entry of a SLURM file: slurm.conf's as slurm.conf(5) classes it, at least the restart the
        role gives a key of its `slurm_restart_keys`; any other file's takes its handlers (UNKNOWN_FILE for a file
        the role does not list)."""
        if file != "slurm.conf":
            return self.file_effects(file)
        effects = slurm_conf_effects(key, old, new)
        restarts = key.split("#", 1)[0].lower() in self.restart_keys
        return ROLE_RESTART if restarts and max(e.action for e in effects) < Action.RESTART else effects

    def file_effects(self, file: str) -> tuple[Effect, ...]:
        handlers = self.notify.get(file)
        if handlers is None:
            return (UNKNOWN_FILE,)
        return tuple(effect for handler in handlers for effect in HANDLERS.get(handler, (UNCLASSIFIED,)))


def _role_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClusterforgeError(Problem(f"cannot read the slurm role's settings: {exc}", str(path))) from None
    if not isinstance(data, dict):
        raise ClusterforgeError(Problem("is not a mapping of variables", str(path)))
    return data


@lru_cache(maxsize=4)
def read_slurm_role(root: Path) -> SlurmRole:
    """`slurm_restart_keys` and `slurm_notify` of the slurm role under the checkout `root`."""
    defaults = root / "roles" / "slurm" / "defaults" / "main.yml"
    variables = root / "roles" / "slurm" / "vars" / "main.yml"
    keys = _role_yaml(defaults).get("slurm_restart_keys")
    notify = _role_yaml(variables).get("slurm_notify")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ClusterforgeError(Problem("slurm_restart_keys is not a list of slurm.conf keys", str(defaults)))
    if not isinstance(notify, dict) or not all(isinstance(h, list) for h in notify.values()):
        raise ClusterforgeError(Problem("slurm_notify is not a mapping of file to handlers", str(variables)))
    return SlurmRole(frozenset(k.lower() for k in keys),
                     {str(file): tuple(str(h) for h in handlers) for file, handlers in notify.items()})


def slurm_role() -> SlurmRole:
    """The slurm role of this checkout (clusterforge.checkout.project_root)."""
    from clusterforge.checkout import project_root

    return read_slurm_role(project_root())
