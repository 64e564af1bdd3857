"""What one render of a cluster is, as data: its files, its hosts with their vars, its group vars and the plan's
physical figures, built from a blueprint (in memory, nothing written) or from a directory `render` wrote.

The SLURM files are read here as well (`conf_entries`): every line keyed by what it sets, and the NodeName
lines by node, so a diff compares nodes rather than hostlist expressions that grow with the cluster.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.hostlist import expand
from clusterforge.lab.render import inventory_groups
from clusterforge.render import MARKER
from clusterforge.render.yamlout import load

if TYPE_CHECKING:
    from clusterforge.analysis import PolicyInputs
    from clusterforge.plan import Plan
    from clusterforge.plan.model import RackLimits
    from clusterforge.render.context import RenderContext

HOSTS_FILE = "inventory/hosts.yml"
GROUP_VARS_FILE = "inventory/group_vars/all.yml"


@dataclass(frozen=True)
class Host:
    """One inventory host: its groups (children resolved) and its vars (its pool group's, then its own)."""

    groups: tuple[str, ...]
    vars: dict[str, Any]


@dataclass(frozen=True)
class Rendered:
    """One render of a cluster. `physical` and `hardware` (host -> catalog key) come from the plan, so they are
    empty when the render was read from a directory."""

    files: dict[str, str]
    hosts: dict[str, Host]
    group_vars: dict[str, Any]
    physical: dict[str, float] = field(default_factory=dict)
    hardware: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_files(cls, files: dict[str, str], physical: dict[str, float] | None = None,
                   hardware: dict[str, str] | None = None) -> Rendered:
        """A render from its files by relative path: hosts and group vars are read from the inventory's."""
        inventory: dict[str, Any] = _yaml(files.get(HOSTS_FILE, ""), HOSTS_FILE)
        group_vars = {**((inventory.get("all") or {}).get("vars") or {}),
                      **_yaml(files.get(GROUP_VARS_FILE, ""), GROUP_VARS_FILE)}
        return cls(dict(files), _hosts(inventory), group_vars, dict(physical or {}), dict(hardware or {}))

    @classmethod
    def from_blueprint(cls, file: Path, inputs: PolicyInputs) -> Rendered:
        """Render blueprint `file` into memory with the renderers `clusterforge render` runs."""
        from clusterforge import analysis
        from clusterforge.render import RenderContext

        result = analysis.analyze(file, analysis.read_policy(inputs))
        return cls.from_context(RenderContext(result.loaded, result.plan, Path.cwd() / "stacks" / "aws"))

    @classmethod
    def from_context(cls, ctx: RenderContext) -> Rendered:
        """The files `clusterforge render` writes for an analysed blueprint, with its plan's figures."""
        from clusterforge.render import render_files

        hardware = {name: pool.hardware for pool in ctx.plan.nodes for name in pool.names()}
        return cls.from_files(render_files(ctx), physical(ctx.plan), hardware)

    @classmethod
    def from_directory(cls, out: Path) -> Rendered:
        """The files a `clusterforge render -o OUT` wrote (links are not followed)."""
        from clusterforge.yamlguard import read_text

        if not (out / MARKER).is_file() or not (out / HOSTS_FILE).is_file():
            raise ClusterforgeError(Problem("is not a directory `clusterforge render` wrote", str(out),
                                            hint=f"a render directory holds {MARKER} and {HOSTS_FILE}"))
        files = {path.relative_to(out).as_posix(): read_text(path, follow=False)
                 for path in sorted(out.rglob("*")) if path.is_file() and not path.is_symlink()
                 and path.name != MARKER}
        return cls.from_files(files)

    def members(self, group: str) -> tuple[str, ...]:
        """The hosts of an inventory group, in inventory order."""
        return tuple(name for name, host in self.hosts.items() if group in host.groups)

    @property
    def dbd_host(self) -> str | None:
        """The host slurmdbd runs on (`slurm_dbd_host`), None without accounting or when it is no host here."""
        host = str(self.group_vars.get("slurm_dbd_host") or "")
        return host if host in self.hosts else None


def _yaml(text: str, name: str) -> dict[str, Any]:
    import yaml

    try:
        data = load(text) if text else {}
    except yaml.YAMLError as exc:
        raise ClusterforgeError(Problem(f"is not YAML: {exc}".splitlines()[0], name)) from None
    if not isinstance(data, dict):
        raise ClusterforgeError(Problem("is not a mapping", name))
    return data


def _hosts(inventory: dict[str, Any]) -> dict[str, Host]:
    """Every host with its groups and its vars: the vars of the groups listing it (its pool's), then its own."""
    groups = inventory_groups(inventory)
    merged: dict[str, dict[str, Any]] = {name: {} for name in groups}
    own: dict[str, dict[str, Any]] = {name: {} for name in groups}
    for body in ((inventory.get("all") or {}).get("children") or {}).values():
        body = body or {}
        for name, host_vars in (body.get("hosts") or {}).items():
            merged.setdefault(name, {}).update(body.get("vars") or {})
            own.setdefault(name, {}).update(host_vars or {})
    return {name: Host(groups[name], merged[name] | own[name]) for name in groups}


def physical(plan: Plan) -> dict[str, float]:
    """The plan's figures a change moves: per rack kW, U and kg; totals of power, heat, fabric, nodes and GPUs."""
    from clusterforge.plan.export import rack_dict

    out: dict[str, float] = {}
    limits: list[RackLimits | None] = list(plan.limits) or [None] * len(plan.loads)
    for load_, limit in zip(plan.loads, limits, strict=True):
        used = rack_dict(load_, limit)["used"]
        out |= {f"rack {load_.rack.name} kW": used["kw"], f"rack {load_.rack.name} U": used["u"],
                f"rack {load_.rack.name} kg": used["weight_kg"]}
    if plan.loads:
        out["total kW"] = round(sum(load_.power_kw for load_ in plan.loads), 3)
        out["total cooling kW"] = round(sum(load_.air_heat_kw + load_.liquid_heat_kw for load_ in plan.loads), 3)
    if plan.fabric is not None:
        out |= {"fabric ports": plan.fabric.endpoints, "fabric switches": plan.fabric.switches}
    out |= {"nodes": sum(pool.count for pool in plan.nodes),
            "GPUs": sum(pool.count * pool.gpu_count for pool in plan.nodes)}
    return out


@dataclass(frozen=True)
class Conf:
    """A SLURM config file as data: every entry by key (`MaxJobCount`, `PartitionName=debug`, `SlurmctldHost#2`
    for a key's second line) and every node named by a NodeName line with the rest of its line(s)."""

    entries: dict[str, str]
    nodes: dict[str, str]


def conf_entries(text: str, named: frozenset[str]) -> Conf:
    """Parse a SLURM config file: comments and blank lines dropped; lines whose first key is in `named`
    (lowercase) keyed `Key=Name`; NodeName lines (but NodeName=DEFAULT) by node; a line without '=' by itself."""
    entries: dict[str, str] = {}
    nodes: dict[str, str] = {}
    seen: Counter[str] = Counter()
    for raw in text.splitlines():
        line = " ".join(raw.split("#", 1)[0].split())
        if not line:
            continue
        word, _, rest = line.partition(" ")
        key, equals, value = word.partition("=")
        if key.lower() == "nodename" and equals and value.lower() != "default":
            for node in expand(value):
                nodes[node] = f"{nodes[node]}; {rest}" if node in nodes else rest
            continue
        if not equals:
            key, value = line, ""
        elif key.lower() in named or key.lower() == "nodename":
            key, value = word, rest
        else:
            value = line[len(key) + 1:]
        seen[key] += 1
        entries[key if seen[key] == 1 else f"{key}#{seen[key]}"] = value
    return Conf(entries, nodes)
