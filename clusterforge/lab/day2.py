"""Day-two changes to a running lab: `lab up --nodes N` on a lab that is up, and `lab update --blueprint B`.

The same path as a real cluster (day2/update.py): the lab is rendered again, compared with what it runs, new
containers start for added nodes, and the update applies the change with running jobs in mind. The render the
lab ran before is kept as `render-prev` until the change is complete, so an interrupted change resumes.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.accelerator_kernel import default
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.day2.diff import Diff, compare
from clusterforge.day2.remote import Result
from clusterforge.day2.rendered import Host, Rendered
from clusterforge.day2.rolling import Progress, digest
from clusterforge.day2.update import Report, Settings, Updater, headline
from clusterforge.lab import cluster, host, labvars, nodes, podman, repo, state
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.render import render
from clusterforge.lab.state import LabState, Node
from clusterforge.provision.runner import EventHandler, Outcome


class LabRemote:
    """Commands on lab nodes over the lab's SSH, as `lab exec` runs them."""

    def __init__(self, paths: LabPaths) -> None:
        self.paths = paths

    def run(self, host: str, argv: Sequence[str], timeout: float = 60) -> Result:
        proc = nodes.ssh(self.paths, host, argv, timeout=timeout)
        return Result(proc.returncode, proc.stdout, proc.stderr)


def _read(render_dir: Path) -> Rendered:
    """A lab render as the day-two code sees it: the lab's compute nodes run the default vendor's driver role
    without GPUs (its stand-ins set its `enable_var`), so a driver or collectives pin concerns them as it would GPU
    nodes."""
    found = Rendered.from_directory(render_dir)
    enable = {var: True} if (var := default().enable_var) else {}
    hosts = {name: Host(host.groups, {**host.vars, **enable})
             if cluster.COMPUTE in host.groups else host for name, host in found.hosts.items()}
    return dataclasses.replace(found, hosts=hosts)


def _previous(paths: LabPaths) -> Path:
    return paths.root / "render-prev"


def _progress(paths: LabPaths) -> Path:
    return paths.root / "update-progress.json"


@dataclass(frozen=True)
class Prepared:
    """The render the lab ran, the one now in place, and what changing from one to the other takes."""

    old: Rendered
    new: Rendered
    diff: Diff


def prepare(paths: LabPaths, blueprint: Path | None, count: int | None, say: cluster.Say) -> Prepared | None:
    """Render the lab as asked and put that render in place (the old one kept as render-prev); the change, or
    None when there is nothing to change. An unfinished earlier change must be the same one."""
    lab = state.require(paths)
    ha = len(lab.in_group(cluster.CONTROLLER)) > 1
    staging = paths.root / "render-next"
    shutil.rmtree(staging, ignore_errors=True)
    render(blueprint or Path(lab.blueprint), [Path(c) for c in lab.catalogs],
           count if count is not None else len(lab.nodes), staging, ha)
    previous = _previous(paths)
    if previous.exists():
        staged, current = _read(staging), _read(paths.render)
        shutil.rmtree(staging)
        if staged.files != current.files:
            raise ClusterforgeError(Problem(
                "an earlier change to this lab is unfinished", str(previous),
                hint="run that change again (same --blueprint and --nodes) to finish it first"))
        say("resuming the unfinished change")
        old = _read(previous)
        return Prepared(old, current, compare(old, current))
    old, new = _read(paths.render), _read(staging)
    change = compare(old, new)
    if not change.changes and not change.added and not change.removed:
        shutil.rmtree(staging)
        return None
    paths.render.rename(previous)
    staging.rename(paths.render)
    return Prepared(old, new, change)


def free_addresses(lab: LabState, subnet: ipaddress.IPv4Network) -> Iterator[str]:
    """The lab network's addresses no node holds, in order: the power-saved nodes keep theirs while powered
    down, as an instance's name keeps its place in the power-save file."""
    taken = {n.ip for n in (*lab.nodes, *lab.launched)}
    return (str(subnet.network_address + i) for i in range(nodes.FIRST_HOST, subnet.num_addresses - 1)
            if str(subnet.network_address + i) not in taken)


def _grow(paths: LabPaths, lab: LabState, new: Rendered, added: Sequence[str]) -> LabState:
    """Start a container for each added node on a free address; the lab's state lists them."""
    free = free_addresses(lab, nodes.ensure_network(paths))
    specs = [nodes.NodeSpec(name, new.hosts[name].groups, next(free)) for name in added
             if lab.node_or_none(name) is None]
    if specs:
        host.require_inotify(len(lab.nodes) + len(specs))
        nodes.start(paths, specs, lab.image, str(paths.repo))
    grown = dataclasses.replace(lab, nodes=(*lab.nodes, *(Node(s.name, paths.container(s.name), s.ip, s.groups)
                                                          for s in specs)))
    state.save(paths, grown)
    nodes.write_ssh_config(paths, [*grown.nodes, *grown.launched])
    nodes.wait_booted(paths, [s.name for s in specs])
    return grown


def _shrink(paths: LabPaths, lab: LabState, removed: Sequence[str]) -> None:
    gone = [n for n in lab.nodes if n.name in removed]
    nodes.close_ssh(paths, [n.name for n in gone])
    if gone:
        podman.run(["rm", "--force", "--time", "10", *(n.container for n in gone)])
    kept = dataclasses.replace(lab, nodes=tuple(n for n in lab.nodes if n.name not in removed))
    state.save(paths, kept)
    nodes.write_ssh_config(paths, [*kept.nodes, *kept.launched])


def change(paths: LabPaths, blueprint: Path | None, count: int | None, settings: Settings, say: cluster.Say,
           on_event: EventHandler | None) -> Report | None:
    """Apply a new lab blueprint or node count to the running lab; None when nothing changes."""
    prepared = prepare(paths, blueprint, count, say)
    if prepared is None:
        say("nothing to change: the lab already runs this blueprint")
        return None
    diff = prepared.diff
    say(headline(diff))
    lab = state.require(paths)
    # a new version pin is served before it is applied, by this lab's repository alone
    lab_repo = repo.ensure(cluster.lab_pins(paths.render), paths.repo, say)
    labvars.write(paths, lab_repo)
    lab = _grow(paths, lab, prepared.new, diff.added)
    if blueprint is not None:
        lab = dataclasses.replace(lab, blueprint=str(blueprint))
        state.save(paths, lab)
    progress = Progress.load(_progress(paths), digest(prepared.old.files, prepared.new.files))

    def apply(hosts: Sequence[str], extra_vars: dict[str, Any]) -> Outcome:
        return cluster.provision(paths, on_event, limit=",".join(hosts), extra_vars=extra_vars)

    report = Updater(diff, prepared.new, LabRemote(paths), apply, progress, settings, say).run()
    if report.ok:
        _shrink(paths, lab, diff.removed)
        shutil.rmtree(_previous(paths))
        _progress(paths).unlink(missing_ok=True)
    return report
