"""What one render of a cluster is, as data: its files, its hosts with their vars, its group vars and the plan's
physical figures, built from a blueprint (in memory, nothing written) or from a directory `render` wrote.

The SLURM files are read by clusterforge.render.conf_parse (`conf_entries`, re-exported here for the modules
that import it from this one): every line keyed by what it sets, and the NodeName lines by node.

A render directory named on the command line is as untrusted as a blueprint (it can come from a pull request),
so it is read with a blueprint's bounds: regular files only (no link, pipe or device), each within
limits.INPUT_BYTES, at most MAX_FILES of them and total_files_bytes() together; its YAML within the alias, value and
depth limits; its SLURM files within conf_parse's node and joined-text bounds; its inventory groups a tree of
bounded size (no group inside itself).

What is built from those files is bounded too, since a few kilobytes can ask for gigabytes once multiplied out:
the group vars copied into hosts (hosts x vars) count against total_host_vars() before any copy is made.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.render import MARKER
from clusterforge.render.conf_parse import conf_entries as conf_entries  # re-exported: diff, rolling, update
from clusterforge.render.manifest import MANIFEST, Manifest, VarKeys, from_json
from clusterforge.render.yamlout import load

if TYPE_CHECKING:
    from clusterforge.pipeline.analysis import PolicyInputs
    from clusterforge.plan import Plan
    from clusterforge.plan.model import RackLimits
    from clusterforge.render.context import RenderContext

HOSTS_FILE = "inventory/hosts.yml"
GROUP_VARS_FILE = "inventory/group_vars/all.yml"
MAX_FILES = 256  # `render` writes about ten
MAX_FOLDER_DEPTH = 8  # `render` writes two levels


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
    manifest: Manifest = field(default_factory=lambda: Manifest({}))
    """What changing each file and key takes (clusterforge.render.manifest), as this version declares it over the
    render's files: this checkout's roles apply the change, so their declarations, not a directory's word, say
    what it takes (a render directory may come from a pull request)."""
    manifest_differs: tuple[str, ...] = ()
    """The files whose classes in the render's own manifest.json differ from `manifest`'s (said, never used)."""

    @classmethod
    def from_files(cls, files: dict[str, str], physical: dict[str, float] | None = None,
                   hardware: dict[str, str] | None = None, origin: str = "") -> Rendered:
        """A render from its files by relative path: hosts and group vars are read from the inventory's.
        `origin` (the directory) names the files in messages."""
        def named(relative: str) -> str:
            return f"{origin.rstrip('/')}/{relative}" if origin else relative

        group_lines: dict[str, int] = {}
        inventory: dict[str, Any] = _yaml(files.get(HOSTS_FILE, ""), named(HOSTS_FILE), group_lines)
        own = _mapping(inventory.get("all"), named(HOSTS_FILE), "all")
        group_vars = {**_mapping(own.get("vars"), named(HOSTS_FILE), "all.vars"),
                      **_yaml(files.get(GROUP_VARS_FILE, ""), named(GROUP_VARS_FILE))}
        nodes_named = 0  # by the NodeName lines of the files before: each file within limits.NODES, all together
        for relative, text in files.items():  # within total_named_nodes(), said against their file and line
            if relative.startswith("slurm/") and relative.endswith(".conf"):
                nodes_named += conf_entries(text, frozenset(), named(relative), nodes_named).named
        hosts = _hosts(inventory, named(HOSTS_FILE), group_lines)
        manifest = _declared(files, inventory, named)
        differs: tuple[str, ...] = ()
        if MANIFEST in files:  # read and checked (it is input), compared, never trusted over this version's
            written = from_json(files[MANIFEST], named(MANIFEST)).files
            differs = tuple(sorted(path for path in {*written, *manifest.files}
                                   if written.get(path) != manifest.files.get(path)))
        return cls(dict(files), hosts, group_vars, dict(physical or {}), dict(hardware or {}), manifest, differs)

    @classmethod
    def from_blueprint(cls, file: Path, inputs: PolicyInputs) -> Rendered:
        """Render blueprint `file` into memory with the renderers `clusterforge render` runs."""
        from clusterforge.pipeline import analysis
        from clusterforge.render import RenderContext
        from clusterforge.target_kernel import project_dir

        result = analysis.analyze(file, analysis.read_policy(inputs))
        return cls.from_context(RenderContext(result.loaded, result.plan, project_dir(result.loaded.cluster)))

    @classmethod
    def from_context(cls, ctx: RenderContext) -> Rendered:
        """The files `clusterforge render` writes for an analysed blueprint, with its plan's figures."""
        from clusterforge.render import render_files

        hardware = {name: pool.hardware for pool in ctx.plan.nodes for name in pool.names()}
        return cls.from_files(render_files(ctx), physical(ctx.plan), hardware)

    @classmethod
    def from_directory(cls, out: Path) -> Rendered:
        """The files a `clusterforge render -o OUT` wrote: regular files only, within the limits above."""
        from clusterforge.files.yamlguard import read_text

        paths = _regular_files(out)
        if MARKER not in paths or HOSTS_FILE not in paths:
            raise ClusterforgeError(Problem("is not a directory `clusterforge render` wrote", str(out),
                                            hint=f"a render directory holds {MARKER} and {HOSTS_FILE}"))
        files: dict[str, str] = {}
        total, bound = 0, total_files_bytes()
        for relative in sorted(paths):
            if relative == MARKER:
                continue
            files[relative] = read_text(out / relative, follow=False)
            total += len(files[relative])
            if total > bound:
                raise ClusterforgeError(Problem(f"more than {bound:,} bytes in the files of a render directory",
                                                str(out), hint=limits.INPUT_BYTES.hint()))
        return cls.from_files(files, origin=str(out))

    def members(self, group: str) -> tuple[str, ...]:
        """The hosts of an inventory group, in inventory order."""
        return tuple(name for name, host in self.hosts.items() if group in host.groups)

    @property
    def dbd_host(self) -> str | None:
        """The host slurmdbd runs on (`slurm_dbd_host`), None without accounting or when it is no host here."""
        host = str(self.group_vars.get("slurm_dbd_host") or "")
        return host if host in self.hosts else None


def _declared(files: dict[str, str], inventory: dict[str, Any], named: Any) -> Manifest:
    """The manifest of a render as this version declares it over its files, with the inventory's keys as read here
    (`inventory`: hosts.yml's data, already checked by _hosts)."""
    from clusterforge.render import OUTPUTS
    from clusterforge.render.inventory import var_keys
    from clusterforge.render.manifest_build import build

    keys = {HOSTS_FILE: var_keys(inventory)}
    for relative, text in files.items():
        if relative.startswith("inventory/group_vars/") and relative.endswith(".yml"):
            data = _yaml(text, named(relative))
            keys[relative] = (VarKeys(group=frozenset(data)) if relative == GROUP_VARS_FILE else
                              VarKeys(host=frozenset(data)))
    return build(files, keys, OUTPUTS)


def total_files_bytes() -> int:
    """The bytes a render directory's files may hold together: four times the limit of one file."""
    return 4 * limits.INPUT_BYTES.value


def total_host_vars() -> int:
    """The host vars an inventory may make by applying its groups' vars to their hosts (hosts x vars), four
    times the YAML value limit: a group var applied to every host is expanded like an alias, but real renders
    do it on purpose (a 100,000-node AWS render applies 8 pool vars to each of its hosts, 800,000)."""
    return 4 * limits.YAML_NODES.value


def _regular_files(out: Path) -> set[str]:
    """Every file below `out` by relative path, links not followed: a link, pipe, device or socket anywhere, more
    than MAX_FILES files or folders nested deeper than MAX_FOLDER_DEPTH is an input problem."""
    found: set[str] = set()
    pending: list[tuple[Path, int]] = [(out, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise ClusterforgeError(Problem(f"cannot read: {exc.strerror}", str(folder))) from None
        for entry in entries:
            mode = entry.stat(follow_symlinks=False).st_mode
            path = Path(entry.path)
            if stat.S_ISDIR(mode) and depth < MAX_FOLDER_DEPTH:
                pending.append((path, depth + 1))
            elif stat.S_ISREG(mode):
                found.add(path.relative_to(out).as_posix())
                if len(found) > MAX_FILES:
                    raise ClusterforgeError(Problem(f"more than {MAX_FILES:,} files in a render directory",
                                                    str(out), hint="`clusterforge render` writes about ten"))
            else:
                what = "a folder nested too deep" if stat.S_ISDIR(mode) else "a link, device, pipe or socket"
                raise ClusterforgeError(Problem(f"not a regular file ({what}): a render directory holds regular "
                                                "files only", str(path)))
    return found


def _yaml(text: str, name: str, group_lines: dict[str, int] | None = None) -> dict[str, Any]:
    """A rendered YAML file as data, within the loader's bounds (size, depth, values once aliases expand).
    `group_lines`, when given, receives the line of each group under `all.children` (an inventory's), so a
    problem found in the data later can still be said against its line."""
    import yaml

    from clusterforge.files.yamlguard import check_graph, check_text

    try:
        if text:
            check_text(text, name)
            node = yaml.compose(text, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader)
            if node is not None:
                check_graph(node, name, limits.YAML_DEPTH.value, limits.YAML_NODES.value)
                if group_lines is not None:
                    group_lines |= _key_lines(_value_of(_value_of(node, "all"), "children"))
            del node  # the composed graph of a 100,000-node inventory is large: not kept while it is loaded
        data = load(text) if text else {}
    except yaml.YAMLError as exc:
        raise ClusterforgeError(Problem(f"is not YAML: {exc}".splitlines()[0], name)) from None
    if not isinstance(data, dict):
        raise ClusterforgeError(Problem("is not a mapping", name))
    return data


def _value_of(node: Any, key: str) -> Any:
    """The node under `key` of a composed mapping node (the last one, as the loader keeps), else None."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    found = [value for name, value in node.value if isinstance(name, yaml.ScalarNode) and name.value == key]
    return found[-1] if found else None


def _key_lines(node: Any) -> dict[str, int]:
    """The line of each plain key of a composed mapping node (none for anything else)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return {}
    return {name.value: name.start_mark.line + 1 for name, _ in node.value if isinstance(name, yaml.ScalarNode)}


def _mapping(value: Any, file: str, path: str) -> dict[str, Any]:
    """`value` where an inventory has a mapping (or nothing); anything else is an input problem."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ClusterforgeError(Problem("is not a mapping, as an Ansible inventory has here", file, path=path))
    return value


@dataclass
class _Groups:
    """An inventory's groups as hosts.yml nests them: each host's groups in file order, each group's parents."""

    file: str
    membership: dict[str, list[str]] = field(default_factory=dict)
    parents: dict[str, list[str]] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)  # a group's position among the groups with children

    def walk(self, inventory: dict[str, Any]) -> None:
        pending: list[tuple[str, Any, str]] = [("all", inventory.get("all"), "all")]
        while pending:
            group, raw, path = pending.pop()
            body = _mapping(raw, self.file, path)
            for host in _mapping(body.get("hosts"), self.file, f"{path}.hosts"):
                groups = self.membership.setdefault(host, [])
                if group != "all":
                    groups.append(group)
            children = _mapping(body.get("children"), self.file, f"{path}.children")
            if children:
                self.order.setdefault(group, len(self.order))
            for child in children:
                if group != "all":
                    self.parents.setdefault(child, []).append(group)
            pending += [(child, children[child], f"{path}.children.{child}") for child in reversed(children)]

    def resolved(self) -> dict[str, tuple[str, ...]]:
        """Every host with its groups and their ancestors, deduplicated in the order Ansible's resolver lists
        them; a group inside itself, or more resolution work than limits.YAML_NODES, is an input problem."""
        budget = limits.YAML_NODES.value
        ancestors: dict[str, tuple[str, ...]] = {}
        for group in [*self.parents, *(g for groups in self.membership.values() for g in groups)]:
            budget -= self._ancestors(group, ancestors, budget)
        out: dict[str, tuple[str, ...]] = {}
        for host, groups in self.membership.items():
            chain = [g for group in groups for g in (group, *ancestors.get(group, ()))]
            budget -= len(chain)
            if budget < 0:
                raise ClusterforgeError(limits.YAML_NODES.problem("resolving the inventory's groups takes more",
                                                                  self.file))
            out[host] = tuple(dict.fromkeys(chain))
        return out

    def _ancestors(self, start: str, done: dict[str, tuple[str, ...]], budget: int) -> int:
        """Work out the ancestors of `start` and the groups above it without recursion; returns the work spent."""
        spent = 0
        stack: list[tuple[str, bool]] = [(start, False)]
        open_: set[str] = set()
        while stack:
            group, ready = stack.pop()
            if group in done:
                continue
            parents = sorted(dict.fromkeys(self.parents.get(group, ())), key=lambda g: self.order.get(g, 0))
            if ready:
                open_.discard(group)
                chain = [*parents, *(a for p in parents for a in done[p])]
                spent += len(chain)
                if spent > budget:
                    raise ClusterforgeError(limits.YAML_NODES.problem(
                        "resolving the inventory's groups takes more", self.file))
                done[group] = tuple(dict.fromkeys(chain))
                continue
            if group in open_:
                raise ClusterforgeError(Problem(f"the group {shown(group)} contains itself (through its children)",
                                                self.file, hint="an inventory's groups must form a tree"))
            open_.add(group)
            stack.append((group, True))
            stack += [(p, False) for p in parents if p not in done]
        return spent


def _hosts(inventory: dict[str, Any], file: str = HOSTS_FILE, lines: dict[str, int] | None = None
           ) -> dict[str, Host]:
    """Every host with its groups and its vars: the vars of the groups listing it (its pool's), then its own.

    Each host gets its own copy of its groups' vars, so a group of h hosts and v vars costs h x v: the vars
    are counted before anything is copied and more than total_host_vars() is an input problem, said at the
    group (its line from `lines`) where the count goes over."""
    walker = _Groups(file)
    walker.walk(inventory)
    groups = walker.resolved()
    top = _mapping(_mapping(inventory.get("all"), file, "all").get("children"), file, "all.children")
    listed: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (group vars, its hosts), checked and counted
    applied, bound = 0, total_host_vars()
    for group, raw in top.items():
        body = _mapping(raw, file, f"all.children.{group}")
        group_vars = _mapping(body.get("vars"), file, f"all.children.{group}.vars")
        hosts = _mapping(body.get("hosts"), file, f"all.children.{group}.hosts")
        for name in (name for name, host_vars in hosts.items() if not isinstance(host_vars, dict | None)):
            _mapping(hosts[name], file, f"all.children.{group}.hosts.{name}")  # not a mapping: raises
        applied += len(group_vars) * len(hosts) + sum(len(host_vars) for host_vars in hosts.values() if host_vars)
        if applied > bound:
            raise ClusterforgeError(Problem(
                f"applying the groups' vars to their hosts makes {applied:,} host vars up to here, over {bound:,} "
                "(four times the YAML value limit)", file, (lines or {}).get(group, 0), f"all.children.{group}",
                limits.YAML_NODES.hint()))
        listed.append((group_vars, hosts))
    merged: dict[str, dict[str, Any]] = {name: {} for name in groups}
    own: dict[str, dict[str, Any]] = {name: {} for name in groups}
    for group_vars, hosts in listed:
        for name, host_vars in hosts.items():
            merged.setdefault(name, {}).update(group_vars)
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
