"""SLURM rules: partitions cover the compute pools, GRES matches the hardware, QOS and accounts are consistent,
HA controllers share their state, and pass-through settings exist in the pinned release."""

from __future__ import annotations

import re
from collections.abc import Iterator

from clusterforge.catalog import Server
from clusterforge.catalog.slurm_parameters import File, release_of, releases
from clusterforge.core.hints import closest, did_you_mean
from clusterforge.core.hints import known as known_names
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("slurm", "SLURM", 70)


@rule("SLM-001", "error", DOMAIN, "Partitions", "SLURM slurm.conf(5): PartitionName, Default",
      inputs=Inputs(("pools[].{name,role,partition}", "slurm.partitions[].{name,pools,default}")))
def partitions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every compute pool is in a partition, and exactly one partition is the default."""
    cluster = ctx.cluster
    declared = cluster.slurm.partitions
    member = {pool for part in declared for pool in part.pools}
    member |= {p.name for p in cluster.pools if p.partition}
    for i, pool in enumerate(cluster.pools):
        if pool.role == "compute" and pool.name not in member:
            yield Draft(("pools", i), f"compute pool {pool.name} is in no SLURM partition",
                        "set its partition:, or list it in slurm.partitions[].pools")
    if declared:
        defaults = [p.name for p in declared if p.default]
        if len(defaults) != 1:
            yield Draft(("slurm", "partitions"), f"{len(defaults)} default partitions"
                        + (f" ({', '.join(defaults)})" if defaults else "") + "; SLURM needs exactly one",
                        "set default: true on one partition", len(defaults), 1)


@rule("SLM-002", "error", DOMAIN, "GRES matches the hardware", "SLURM gres.conf(5); the hardware catalog",
      inputs=Inputs(("pools[].{hardware,gres}",), ("gpus",)))
def gres_matches(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A pool's declared gres (gpu[:type]:count) agrees with the catalog's GPU count and model per node (per tray
    of a rack-scale system)."""
    for i, pool in enumerate(ctx.cluster.pools):
        if pool.gres is None:
            continue
        entry = ctx.catalog.get(pool.hardware)
        gpus = entry.node_gpus if isinstance(entry, Server) else getattr(entry, "gpus", None)
        match = re.fullmatch(r"gpu(?::([A-Za-z0-9_-]+))?:(\d+)", pool.gres)
        count = gpus.count if gpus else 0
        expected = f"gpu:{gpus.model.split('-')[0].lower()}:{count}" if gpus else "none"
        if match is None or int(match.group(2)) != count or (
                match.group(1) and gpus and match.group(1).lower() != gpus.model.split("-")[0].lower()):
            yield Draft(("pools", i, "gres"), f"pool {pool.name} declares gres {pool.gres!r}; {pool.hardware} has "
                        f"{count} × {gpus.model if gpus else 'no GPU'}", f"use {expected} or omit gres")


NORMAL = "normal"  # the QOS every SLURM database has: accounts may name it without declaring it


def _unknown_qos(name: str, known: list[str], path: tuple[str | int, ...], who: str) -> Draft:
    return Draft(path, f"{who} names QOS {name}, which slurm.qos does not declare",
                 did_you_mean(name, known, f"declare it in slurm.qos (known: {known_names(known)})"))


def _cycle(preempts: dict[str, list[str]]) -> list[str] | None:
    """A preemption cycle (a → b → … → a) among the declared QOS, or None (depth-first, without recursion)."""
    done: set[str] = set()
    for start in preempts:
        if start in done:
            continue
        path, on_path, stack = [start], {start}, [iter(preempts[start])]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                node = path.pop()
                on_path.discard(node)
                done.add(node)
                stack.pop()
            elif child in on_path:
                return [*path[path.index(child):], child]
            elif child in preempts and child not in done:
                path.append(child)
                on_path.add(child)
                stack.append(iter(preempts[child]))
    return None


@rule("SLM-003", "error", DOMAIN, "QOS preemption is consistent",
      "SLURM sacctmgr(1) QOS Preempt; slurm.schedmd.com/preempt.html (PreemptType=preempt/qos)",
      inputs=Inputs(("slurm.qos[].{name,preempt}", "slurm.preempt_mode")))
def qos_preemption(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each QOS preempts only other declared QOS (or `normal`), without a cycle, and preemption is not switched off
    while a QOS asks for it. (A QOS declared twice is refused before any rule runs: model/references.py.)"""
    spec = ctx.cluster.slurm
    names = [q.name for q in spec.qos]
    known = [NORMAL, *names]
    declared = set(known)
    unknown: dict[str, list[tuple[str, tuple[str | int, ...]]]] = {}  # one finding per unknown name, not per use
    for i, qos in enumerate(spec.qos):
        for j, victim in enumerate(qos.preempt):
            path = ("slurm", "qos", i, "preempt", j)
            if victim == qos.name:
                yield Draft(path, f"QOS {qos.name} preempts itself", "remove it from its own preempt list")
            elif victim not in declared:
                unknown.setdefault(victim, []).append((qos.name, path))
    for victim, uses in unknown.items():
        first, where = uses[0]
        others = f" (and {len(uses) - 1:,} other preempt lists)" if len(uses) > 1 else ""
        yield _unknown_qos(victim, known, where, f"QOS {first}'s preempt list{others}")
    preempts: dict[str, list[str]] = {}
    for qos in spec.qos:
        preempts.setdefault(qos.name, []).extend(v for v in qos.preempt if v != qos.name)
    cycle = _cycle(preempts)
    if cycle:
        index = names.index(cycle[0])
        yield Draft(("slurm", "qos", index, "preempt"), f"QOS preempt one another in a cycle: {' → '.join(cycle)}",
                    "preemption goes one way: a QOS may not (indirectly) preempt one that preempts it")
    if spec.preempt_mode == "off" and any(q.preempt for q in spec.qos):
        preempting = next(q.name for q in spec.qos if q.preempt)
        yield Draft(("slurm", "preempt_mode"), f"slurm.preempt_mode is off, yet QOS {preempting} preempts others",
                    "set preempt_mode: requeue or cancel, or remove the preempt lists")


@rule("SLM-004", "error", DOMAIN, "Accounts name declared QOS",
      "SLURM sacctmgr(1) account QOS and DefaultQOS; slurm.schedmd.com/qos.html",
      inputs=Inputs(("slurm.accounts[].{name,qos,default_qos}", "slurm.qos[].name")))
def account_qos(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each account names only declared QOS (or `normal`), and its default QOS is one of its QOS (`normal` when it
    lists none). (An account declared twice is refused before any rule runs: model/references.py.)"""
    spec = ctx.cluster.slurm
    known = [NORMAL, *(q.name for q in spec.qos)]
    for i, account in enumerate(spec.accounts):
        base = ("slurm", "accounts", i)
        for j, name in enumerate(account.qos):
            if name not in known:
                yield _unknown_qos(name, known, (*base, "qos", j), f"account {account.name}")
        default = account.default_qos
        if default is None:
            continue
        if default not in known:
            yield _unknown_qos(default, known, (*base, "default_qos"), f"account {account.name}'s default_qos")
        elif default not in (account.qos or [NORMAL]):
            allowed = ", ".join(account.qos or [NORMAL])
            yield Draft((*base, "default_qos"), f"account {account.name}'s default QOS {default} is not one of its "
                        f"QOS ({allowed}); sacctmgr refuses it", f"add {default} to its qos, or pick one of them")


@rule("SLM-005", "error", DOMAIN, "QOS and accounts need accounting",
      "SLURM accounting.html: QOS, accounts and their limits live in slurmdbd",
      inputs=Inputs(("slurm.accounting.{enabled,pool}", "slurm.qos[].name", "slurm.accounts[].name",
                     "pools[].{name,role}")))
def needs_accounting(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """QOS and accounts are declared only with accounting on, and slurmdbd does not run on a compute pool."""
    spec = ctx.cluster.slurm
    if not spec.accounting.enabled:
        for field in ("qos", "accounts"):
            if getattr(spec, field):
                yield Draft(("slurm", field), f"slurm.{field} is declared but slurm.accounting.enabled is false: "
                            "SLURM keeps QOS and accounts in slurmdbd", f"enable accounting or remove slurm.{field}")
    pool = ctx.pools.get(spec.accounting.pool or "")
    if spec.accounting.enabled and pool is not None and pool.role == "compute":
        yield Draft(("slurm", "accounting", "pool"), f"slurmdbd and its database would run on compute pool "
                    f"{pool.name}", "give it a pool of role controller or storage, or leave pool unset "
                    "(the primary controller)")


def _under(path: str, mount: str) -> bool:
    return path == mount or path.startswith(mount.rstrip("/") + "/")


@rule("SLM-006", "error", DOMAIN, "HA controllers keep state on shared storage",
      "SLURM slurm.conf(5) StateSaveLocation (\"must be ... accessible by the primary and backup control "
      "machines\"); the measured recipe, section 6",
      inputs=Inputs(("pools[].{role,count}", "slurm.state_save_location", "storage.shared.mount",
                     "storage.lustre.mount")))
def ha_state(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """With two or more controllers (HA), StateSaveLocation is under `storage.shared.mount` or the Lustre mount:
    the backup takes over from the state the primary saved."""
    controllers = next((p for p in ctx.cluster.pools if p.role == "controller"), None)
    if controllers is None or controllers.count < 2:
        return
    state = ctx.cluster.slurm.state_save_location
    storage = ctx.cluster.storage
    mounts = [m for m in (storage.shared.mount if storage.shared else None,
                          storage.lustre.mount if storage.lustre else None) if m]
    if any(_under(state, mount) for mount in mounts):
        return
    hint = (f"set slurm.state_save_location under {mounts[0]}, e.g. {mounts[0]}/slurm/state" if mounts else
            "add storage.shared (an NFS export both controllers mount) and put state_save_location under it")
    yield Draft(("slurm", "state_save_location"), f"{controllers.count} controllers (HA) but StateSaveLocation "
                f"{state} is not on shared storage: the backup would take over without the primary's state", hint)


def _settings_drafts(keys: list[str], field: str, file: File, release: str) -> Iterator[Draft]:
    params = releases()[release]
    for key in keys:
        if params.canonical(file, key) is not None:
            continue
        elsewhere = [r for r, other in releases().items() if other.canonical(file, key) is not None]
        page = file.replace("_", ".")
        suggestion = closest(key, params.known(file))
        if elsewhere:
            hint = f"it is a parameter of SLURM {', '.join(elsewhere)}: pin one of them, or remove it"
        else:
            hint = f"did you mean {suggestion}?" if suggestion else f"see {page}(5)"
        yield Draft(("slurm", field, key), f"{key} is not a {page} parameter of SLURM {release}: the daemons "
                    "refuse a file with an unknown key", hint)


@rule("SLM-007", "error", DOMAIN, "Settings are parameters of the pinned release",
      "slurm.conf(5) and cgroup.conf(5) of each release (clusterforge/catalog/data/slurm-parameters.yaml, "
      "read from the man pages)",
      inputs=Inputs(("slurm.settings", "slurm.cgroup_settings", "software.slurm"),
                    also="the parameter lists per release in `clusterforge/catalog/data/slurm-parameters.yaml`"))
def known_settings(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every key of `slurm.settings` is a slurm.conf parameter, and of `slurm.cgroup_settings` a cgroup.conf
    parameter, of the pinned SLURM release (with the nearest name when it is not)."""
    spec, version = ctx.cluster.slurm, ctx.cluster.software.slurm
    if not (spec.settings or spec.cgroup_settings) or not re.fullmatch(r"\d+\.\d+(\.\d+)*", version):
        return  # nothing to check, or SW-002 reports the pin
    release = release_of(version)
    if release not in releases():
        yield Draft(("slurm", "settings" if spec.settings else "cgroup_settings"), f"settings not checked: no "
                    f"parameter list for SLURM {release}", f"lists exist for {', '.join(releases())}",
                    level="info")
        return
    yield from _settings_drafts(list(spec.settings), "settings", "slurm_conf", release)
    yield from _settings_drafts(list(spec.cgroup_settings), "cgroup_settings", "cgroup_conf", release)

