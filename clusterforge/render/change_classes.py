"""What a change to each rendered setting means for running work, as declared beside what reads it: the lookups
the render manifest (clusterforge.render.manifest_build) classes every rendered key with.

Nothing here lists variables. A rendered variable's class is declared once, where it belongs: by the role that
reads it (roles/<role>/meta/clusterforge.yml, beside its meta/argument_specs.yml), by the renderer for the facts
it writes for people and Ansible's connection vars (clusterforge/render/facts.yaml), by the accelerator vendor for
its pin vars (`PinVar`), or by the target for its own keys (its `day2.py`'s `EFFECTS`); `declarations_of` looks a key up
in that order, clusterforge/render/declarations.py reads the files (the types, `Action`, `Effect`, `Hosts`, are
clusterforge/render/change_effects.py, below both, and imported from here too).
tests/test_setting_declarations.py renders every example and fails on a key declared nowhere, or twice.

slurm.conf keys take the class SLURM 24.11's man pages state (catalog/data/slurm-changes.yaml, each row with its
sentence): a reconfigure unless the page says otherwise. The slurm role is the source for its other files:
`slurm_notify` (roles/slurm/vars/main.yml) names the handler each rendered file notifies and its
meta/clusterforge.yml what each handler takes; and a key in its `slurm_restart_keys` is at least a restart,
since that is what the role does with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

import clusterforge.accelerator_kernel as accelerators
from clusterforge.catalog.slurm_changes import Daemon, changes
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.render.change_effects import Action as Action
from clusterforge.render.change_effects import Effect as Effect
from clusterforge.render.change_effects import FabricHosts as FabricHosts
from clusterforge.render.change_effects import Hosts as Hosts
from clusterforge.render.change_effects import VendorGpus as VendorGpus
from clusterforge.render.declarations import Declared, facts, read_bindings


def _one(action: Action, hosts: Hosts, why: str, daemon: str | None = None) -> tuple[Effect, ...]:
    return (Effect(action, hosts, why, daemon),)


def _pin_effects(vendor: str, reboot: bool, why: str) -> tuple[Effect, ...]:
    """An accelerator vendor's pin variable, as its declaration (`PinVar`) says: a kernel module reboots the hosts
    with its GPUs, a library jobs load drains the GPU hosts while it is replaced."""
    return _one(Action.REBOOT, VendorGpus(vendor), why) if reboot else _one(Action.DRAIN, "gpu", why)


UNCLASSIFIED = Effect(Action.DRAIN, "all", "not classified: treated as needing idle nodes")
UNCLASSIFIED_HOST = Effect(Action.DRAIN, "changed", UNCLASSIFIED.why)

CONTROLLER_GROUP = "slurm_controller"
COMPUTE_GROUP = "slurm_compute"


@dataclass(frozen=True)
class TargetEffects:
    """A target's own keys and what changing each takes, declared in its package (its `day2.py`'s `EFFECTS`), so that
    nothing here names a target: its cluster-wide vars, the facts its deployment adds to hosts.yml (compared only
    when both renders have them: a render without the deployment's outputs says nothing about addresses), the
    keys of the config file it renders (None: a key that is not a setting), its host and pool vars, and what
    each key of its own that no role reads is."""

    group_vars: Mapping[str, tuple[Effect, ...]] = field(default_factory=dict)
    facts: frozenset[str] = frozenset()
    config: Callable[[str], Effect | None] | None = None
    host_vars: Mapping[str, Effect] = field(default_factory=dict)
    """Its keys written per host or per pool in hosts.yml, and what a change of each takes there."""
    descriptions: Mapping[str, str] = field(default_factory=dict)
    """What each of its keys that no role reads is, for people (the facts its deployment reports)."""
    config_dir: str | None = None
    """The folder of the render holding the config file(s) it renders (`pulumi/`), compared key by key."""
    config_entries: Callable[[str], Mapping[str, Any]] | None = None
    """A config file's text as its settings by key (compared with `config`)."""
    resources_file: str | None = None
    """The resources file it renders (clusterforge.render.resource_file): what its deployment builds, compared
    resource by resource and setting by setting."""
    resource_classes: Callable[[str], Mapping[str, Any]] | None = None
    """That file's text as what changing each of its keys takes: a `clusterforge.render.manifest.Classed` per
    resource (its presence and kind) and per setting (`<resource>.<setting>`)."""


@lru_cache(maxsize=1)
def target_effects() -> tuple[TargetEffects, ...]:
    """Every registered target's table (read once, when a diff is first made)."""
    from clusterforge.target_kernel import registered

    return tuple(table for target in registered().values() if (table := _effects_of(target)) is not None)


def _effects_of(target: Any) -> TargetEffects | None:
    """A target's table: the `EFFECTS` of its `day2.py`, where it has one."""
    from clusterforge.target_kernel import stage_value

    return stage_value(target, "day2", "EFFECTS", TargetEffects)


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

UNKNOWN_FILE = Effect(Action.DRAIN, "all", "not classified: treated as needing idle nodes")


def declarations_of(key: str) -> tuple[Declared, ...]:
    """Every declaration of what changing `key` takes, in lookup order: the roles' bindings
    (roles/<role>/meta/clusterforge.yml), the facts render writes for people (clusterforge/render/facts.yaml),
    the accelerator vendors' pin vars and the targets' own keys. A rendered key has exactly one
    (tests/test_setting_declarations.py); a key with none, from a render of a newer version, is UNCLASSIFIED."""
    from clusterforge.files.checkout import project_root

    return _index(project_root()).get(key, ())


@lru_cache(maxsize=4)
def _index(root: Path) -> dict[str, tuple[Declared, ...]]:
    from clusterforge.target_kernel import registered

    index: dict[str, tuple[Declared, ...]] = {}
    sources: list[dict[str, Declared]] = [read_bindings(root).settings, facts()]
    sources.append({pin.var: Declared(f"clusterforge/accelerators ({vendor.name}: PinVar {pin.pin})",
                                      group=_pin_effects(vendor.name, pin.reboot, pin.why))
                    for vendor in accelerators.registered().values() for pin in vendor.pin_vars})
    for name, target in registered().items():
        table = _effects_of(target)
        if table is not None:
            where = f"target {name} (its day2.py's EFFECTS)"
            own = {key: Declared(where, group=effects) for key, effects in table.group_vars.items()}
            for key, effect in table.host_vars.items():
                own[key] = Declared(where, own[key].group if key in own else None, effect)
            sources.append(own)
    for source in sources:
        for key, declared in source.items():
            index[key] = (*index.get(key, ()), declared)
    return index


def var_class(key: str, per_host: bool) -> tuple[tuple[Effect, ...], str] | None:
    """What a change of `key` takes, written cluster-wide or (`per_host`) per host or pool, and where that is
    declared; None where nothing declares it so (the render manifest leaves such a key out)."""
    for declared in declarations_of(key):
        if per_host and declared.host is not None:
            return (declared.host,), declared.where
        if not per_host and declared.group is not None:
            return declared.group, declared.where
    return None


def group_var_effects(key: str) -> tuple[Effect, ...]:
    """What a change of a cluster-wide var takes, as its declaration says; UNCLASSIFIED where none does."""
    return next((d.group for d in declarations_of(key) if d.group is not None), (UNCLASSIFIED,))


def host_var_effect(key: str) -> Effect:
    """What a change of a host or pool var takes, as its declaration says; UNCLASSIFIED for the hosts that
    changed where none does."""
    return next((d.host for d in declarations_of(key) if d.host is not None), UNCLASSIFIED_HOST)


def config_table(path: str) -> TargetEffects | None:
    """The target whose rendered config file `path` is (under its `config_dir`), or None."""
    return next((table for table in target_effects()
                 if table.config_dir is not None and path.startswith(table.config_dir)), None)


# ---------------------------------------------------------------------------------------------------------------
# The slurm role's own lists, read at run time


@dataclass(frozen=True)
class SlurmRole:
    """What the slurm role says about its files: the restart keys (lowercase: SLURM's keys ignore case), the
    handlers each rendered file notifies, and what each handler takes (its meta/clusterforge.yml)."""

    restart_keys: frozenset[str]
    notify: dict[str, tuple[str, ...]]
    handlers: dict[str, tuple[Effect, ...]] = field(default_factory=dict)

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
        return tuple(effect for handler in handlers for effect in self.handlers.get(handler, (UNCLASSIFIED,)))


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
    """`slurm_restart_keys` and `slurm_notify` of the slurm role under the checkout `root`, and its handlers'
    effects."""
    defaults = root / "roles" / "slurm" / "defaults" / "main.yml"
    variables = root / "roles" / "slurm" / "vars" / "main.yml"
    keys = _role_yaml(defaults).get("slurm_restart_keys")
    notify = _role_yaml(variables).get("slurm_notify")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ClusterforgeError(Problem("slurm_restart_keys is not a list of slurm.conf keys", str(defaults)))
    if not isinstance(notify, dict) or not all(isinstance(h, list) for h in notify.values()):
        raise ClusterforgeError(Problem("slurm_notify is not a mapping of file to handlers", str(variables)))
    return SlurmRole(frozenset(k.lower() for k in keys),
                     {str(file): tuple(str(h) for h in handlers) for file, handlers in notify.items()},
                     read_bindings(root).handlers)


def slurm_role() -> SlurmRole:
    """The slurm role of this checkout (clusterforge.files.checkout.project_root)."""
    from clusterforge.files.checkout import project_root

    return read_slurm_role(project_root())
