"""Lab lifecycle: up (images, repo, render, containers, site.yml, a job), provision, status, exec, down."""

from __future__ import annotations

import ipaddress
import json
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.checkout import project_root
from clusterforge.lab import (
    bake,
    bmc_service,
    host,
    image,
    labvars,
    launched,
    nodes,
    podman,
    power_agent,
    repo,
    selfboot,
    state,
)
from clusterforge.lab.metal import servers
from clusterforge.lab.paths import LABEL, LabPaths, shared_cache
from clusterforge.lab.render import group_vars, inventory_hosts, render
from clusterforge.lab.state import LabState, Node
from clusterforge.provision.runner import EventHandler, Outcome, Run, execute

Say = Callable[[str], None]
CONTROLLER = "slurm_controller"
COMPUTE = "slurm_compute"
POWER_UP_S = 600  # a power-saved lab node: a container start and its boot phase (about 45 s measured), loaded


@dataclass
class Timings:
    steps: list[tuple[str, float]] = field(default_factory=list)
    _last: float = field(default_factory=time.monotonic)

    def mark(self, step: str) -> None:
        now = time.monotonic()
        self.steps.append((step, now - self._last))
        self._last = now


def lab_pins(rendered: Path) -> repo.Pins:
    """The versions the repository serves: the blueprint's pins (its vendors' and targets' stand-ins'); the Lustre
    client's is the role's default (the blueprint has no Lustre client pin)."""
    gv = group_vars(rendered)
    lustre = gv.get("lustre_client_version") or role_default("lustre_client", "lustre_client_version")
    return repo.Pins(lustre_client=str(lustre), others=repo.other_pins(gv))


def role_default(role: str, variable: str) -> object:
    defaults = yaml.safe_load((project_root() / "roles" / role / "defaults" / "main.yml").read_text())
    return defaults[variable]


def ansible_env(paths: LabPaths) -> dict[str, str]:
    """What every Ansible run against the lab adds to the environment (benchmarks/lab_bench.py uses it too)."""
    # Lab nodes make new host keys every `up`; ssh_config keeps them out of known_hosts.
    return {"ANSIBLE_CACHE_PLUGIN_CONNECTION": str(paths.facts), "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_SSH_CONTROL_PATH": f"{paths.root}/cp-%%n"}


def pushed_to(paths: LabPaths, inventory: Path, limit: str | None) -> tuple[list[Path], str | None]:
    """The inventories and limit of a push. A lab with power-saved pools adds what its nodes are given to boot
    (the boot folder's nodes.yml: the nodes SLURM starts, in their pools' groups), so a push sees the cluster as a
    node configuring itself does (its /etc/hosts and node lists name them too), and leaves those nodes out of the
    run: SLURM powers them, and a powered-down one answers nothing."""
    lab = state.load(paths)
    launched = [node.name for node in lab.launched] if lab is not None else []
    given = paths.root / "boot" / "nodes.yml"
    if not launched or not given.is_file():
        return [inventory], limit
    return [inventory, given], ":".join([limit or "all", *(f"!{name}" for name in launched)])


def _run(paths: LabPaths, inventory: Path, on_event: EventHandler | None, *, check: bool = False,
         diff: bool = False, tags: str | None = None, limit: str | None = None, fast: bool = True,
         extra_vars: dict[str, Any] | None = None, vars_files: Sequence[Path] = ()) -> Outcome:
    inventories, limit = pushed_to(paths, inventory, limit)
    return execute(Run(
        project=project_root(), inventories=inventories, private_dir=paths.runner_dir, check=check, diff=diff,
        tags=tags, limit=limit, extra_vars_files=[paths.extra_vars, *vars_files], extra_vars=extra_vars or {},
        fast=fast, env=ansible_env(paths)), on_event)


def ensure_baked(paths: LabPaths, node_image: str, rendered: Path, say: Say, on_event: EventHandler | None) -> str:
    """The lab's baked image (lab/bake.py): one node in every role group, the lab's repository, tagged by the
    lab's inputs (`bake_inputs`); baked once per change of them."""
    tag = f"{bake.BAKED_REPO}:{bake.bake_inputs(node_image, lab_pins(rendered), rendered)}"
    bake.ensure_baked(paths, node_image, bake.Recipe(rendered, tag, vars_files=(paths.extra_vars,)), say, on_event)
    return tag


@dataclass(frozen=True)
class Prepared:
    """What `prepare` made: the lab's state, its always-on nodes, those of its power-saved pools, its subnet."""

    lab: LabState
    specs: list[nodes.NodeSpec]
    launched: list[nodes.NodeSpec]
    timings: Timings
    subnet: ipaddress.IPv4Network

    def controller_mounts(self, paths: LabPaths) -> Callable[[nodes.NodeSpec], list[str]]:
        """What a node is given beyond the rest: the controllers get the power agent's folder when SLURM powers
        nodes of this lab up."""
        def mounts(spec: nodes.NodeSpec) -> list[str]:
            return launched.controller_mount(paths) if self.launched and CONTROLLER in spec.groups else []
        return mounts


def prepare(paths: LabPaths, blueprint: Path, catalogs: Sequence[Path], count: int | None, bare: bool, say: Say,
            on_event: EventHandler | None, ha: bool = False, metal: bool = False,
            bmc_emulator: Callable[[], Path] = bmc_service.emulator_program) -> Prepared:
    """Everything before the nodes start: render, images, repository, the lab's state; with power-saved pools their
    BMCs' emulator (`bmc_emulator`: this environment's, or the metal lab's own) and the power agent that starts
    their nodes. In the metal lab (`metal`) virtual servers are those nodes, at the blueprint's address plan."""
    if state.load(paths) is not None or podman.labelled("container", f"{LABEL}={paths.name}"):
        raise ClusterforgeError(Problem(
            f"lab {paths.name} is already up", str(paths.state),
            hint="`clusterforge lab provision` to re-run, `clusterforge lab down` to remove it"))
    timings = Timings()
    host.require(need_mmdebstrap=not podman_image_exists(image.BASE_IMAGE))
    paths.make()
    rendered_cluster = render(blueprint, catalogs, count, paths.render, ha)
    hosts = inventory_hosts(paths.render / "inventory/hosts.yml")
    if not any(CONTROLLER in g for g in hosts.values()):
        raise ClusterforgeError(Problem("the rendered inventory has no slurm_controller host", str(blueprint)))
    host.require_inotify(len(hosts))
    timings.mark("render")
    node_image = image.ensure_node(say)
    lab_repo = repo.ensure(lab_pins(paths.render), paths.repo, say)
    nodes.ensure_ssh_key(paths)
    labvars.write(paths, lab_repo)
    planned = nodes.planned_addresses(paths.render) if metal else {}
    subnet = nodes.ensure_network(paths, nodes.planned_network(rendered_cluster, blueprint) if metal else None)
    timings.mark("images and repository")
    run_image = node_image if bare else ensure_baked(paths, node_image, paths.render, say, on_event)
    timings.mark("baked image")
    specs = nodes.specs_for(hosts, subnet, planned)
    on_demand = launched.specs(paths.render, subnet, len(specs), planned)
    if on_demand and bare:
        raise ClusterforgeError(Problem("nodes SLURM powers up start from the baked image", "--bare",
                                        hint="drop --bare, or the pools with a max_count"))
    if on_demand and launched.by_bmc(paths.render):  # the BMCs in front of them, and where the controllers find them
        labvars.write(paths, lab_repo, bmc_service.prepare(paths, on_demand, subnet, bmc_emulator()))
    controller = next(name for name, groups in hosts.items() if CONTROLLER in groups)
    lab = LabState(paths.name, str(blueprint), tuple(str(c) for c in catalogs), run_image, paths.network, controller,
                   tuple(Node(s.name, paths.container(s.name), s.ip, s.groups) for s in specs),
                   tuple(Node(s.name, paths.container(s.name), s.ip, s.groups) for s in on_demand))
    state.save(paths, lab)
    if on_demand and not metal:
        power_agent.start(paths)
        say(f"power agent started: SLURM powers {len(on_demand)} node(s) of power-saved pools up and down "
            f"({', '.join(s.name for s in on_demand)})")
    return Prepared(lab, specs, on_demand, timings, subnet)


def up(paths: LabPaths, blueprint: Path, catalogs: Sequence[Path], count: int | None, bare: bool, say: Say,
       on_event: EventHandler | None, ha: bool = False) -> tuple[LabState, Outcome, Timings]:
    """Bring a lab up and provision it over SSH (site.yml pushed to every node); the caller runs the smoke job."""
    made = prepare(paths, blueprint, catalogs, count, bare, say, on_event, ha)
    lab, specs, timings = made.lab, made.specs, made.timings
    if made.launched:  # they configure themselves: what they are given is written as for `--boot self`
        lab_vars = yaml.safe_load(paths.extra_vars.read_text(encoding="utf-8"))
        cluster = str(group_vars(paths.render)["clusterforge_cluster"])
        selfboot.write_boot_dir(paths, cluster, lab.controller, specs, lab_vars, made.launched)
    nodes.start(paths, specs, lab.image, str(paths.repo), given=made.controller_mounts(paths))
    nodes.write_ssh_config(paths, [*lab.nodes, *lab.launched])
    nodes.wait_booted(paths, [s.name for s in specs])
    timings.mark("containers booted")
    say(f"{len(specs)} nodes up ({', '.join(n.name for n in lab.nodes)}); running site.yml over SSH")
    outcome = _run(paths, paths.render / "inventory/hosts.yml", on_event)
    timings.mark("site.yml")
    return lab, outcome, timings


def up_self(paths: LabPaths, blueprint: Path, catalogs: Sequence[Path], count: int | None, say: Say,
            on_event: EventHandler | None, ha: bool = False) -> tuple[LabState, dict[str, selfboot.Booted], Timings]:
    """Bring a lab up from the baked image with every node configuring itself (lab/selfboot.py): the control host
    runs no Ansible against the nodes. The caller runs the smoke job."""
    made = prepare(paths, blueprint, catalogs, count, False, say, on_event, ha)
    lab, specs, timings = made.lab, made.specs, made.timings
    lab_vars = yaml.safe_load(paths.extra_vars.read_text(encoding="utf-8"))
    cluster = str(group_vars(paths.render)["clusterforge_cluster"])
    booted = selfboot.start(paths, cluster, lab.controller, specs, lab.image, str(paths.repo), lab_vars, say,
                            made.launched, made.controller_mounts(paths))
    nodes.write_ssh_config(paths, [*lab.nodes, *lab.launched])  # for `lab exec`, `lab provision` and people
    timings.mark("nodes configured themselves")
    return lab, booted, timings


def podman_image_exists(name: str) -> bool:
    return podman.exists("image", name) if shutil.which("podman") else False


def provision(paths: LabPaths, on_event: EventHandler | None, check: bool = False, diff: bool = False,
              tags: str | None = None, limit: str | None = None, fast: bool = True,
              extra_vars: dict[str, Any] | None = None, vars_files: Sequence[Path] = ()) -> Outcome:
    state.require(paths)
    return _run(paths, paths.render / "inventory/hosts.yml", on_event, check=check, diff=diff, tags=tags,
                limit=limit, fast=fast, extra_vars=extra_vars, vars_files=vars_files)


def smoke_job(lab: LabState, timeout: float = 60) -> tuple[list[str], float]:
    """The smoke job's command and how long it may take: every always-on compute node, or, where every compute
    node is power-saved (a pool `count: 0`-or-more with `max_count`, its nodes started by SLURM), one of them,
    with the time SLURM takes to power it up (`srun` waits for it, as a user's job would)."""
    computes = len(lab.in_group(COMPUTE))
    if computes:
        return ["srun", f"-N{computes}", "--time=1", "hostname"], timeout
    if not lab.launched:
        raise ClusterforgeError(Problem("the lab has no compute node to run its smoke job on", lab.controller,
                                        hint="give the blueprint a compute pool"))
    return ["srun", "-N1", "--time=1", "hostname"], max(timeout, POWER_UP_S)


def smoke(paths: LabPaths, lab: LabState, timeout: float = 60) -> str:
    """Run the smoke job (`smoke_job`) on the controller once every compute node is idle; its output."""
    command, timeout = smoke_job(lab, timeout)
    deadline = time.monotonic() + timeout
    while True:
        proc = nodes.ssh(paths, lab.controller, command, timeout=timeout)
        if proc.returncode == 0:
            return proc.stdout
        if time.monotonic() > deadline:
            raise ClusterforgeError(Problem(f"{shlex.join(command)} failed: {proc.stderr.strip()[-300:]}",
                                            lab.controller, hint=f"clusterforge lab exec {lab.controller} -- sinfo"))
        time.sleep(1)


def monitoring_node(paths: LabPaths, lab: LabState) -> Node | None:
    """The node running Prometheus and Alertmanager (roles/monitoring), None when the blueprint has none."""
    rendered = group_vars(paths.render) if (paths.render / "inventory/group_vars/all.yml").is_file() else {}
    host = rendered.get("monitoring_host") if rendered.get("monitoring_enabled") else None
    return lab.node(str(host)) if host else None


def monitoring_urls(paths: LabPaths, lab: LabState) -> str:
    """Where Prometheus and Alertmanager answer, from this host ("" when the lab's blueprint has none)."""
    node = monitoring_node(paths, lab)
    if node is None:
        return ""
    return f"Prometheus http://{node.ip}:9090  Alertmanager http://{node.ip}:9093 (on {node.name})"


def running_containers(paths: LabPaths) -> set[str]:
    return {name for name in podman.labelled("container", f"{LABEL}={paths.name}")
            if podman.inspect("container", name)["State"]["Running"]}


def stopped_nodes(paths: LabPaths) -> list[str]:
    """Nodes of the lab whose container is not running (none when no lab of that name is up)."""
    lab = state.load(paths)
    if lab is None:
        return []
    running = running_containers(paths)
    return [n.name for n in lab.nodes if n.container not in running]


def power(paths: LabPaths, names: Sequence[str], on: bool, say: Say) -> list[str]:
    """Power nodes off (`podman stop`, no grace: a failed server does not shut down cleanly) or on (`podman start`,
    then wait until they boot); the nodes acted on. No names: every node of the lab. Powering on also starts the
    power agent again where it is gone (a host reboot ends it) and the lab has power-saved pools."""
    lab = state.require(paths)
    if on and lab.launched and power_agent.running_pid(paths) is None:
        power_agent.start(paths)
        say(f"power agent started again: SLURM can power {len(lab.launched)} node(s) of power-saved pools up")
    targets = [lab.node(name) for name in names] if names else list(lab.nodes)
    running = running_containers(paths)
    acted = [n for n in targets if (n.container in running) != on]
    already = "running" if on else "stopped"
    if names:
        for node in targets:
            if node not in acted:
                say(f"{node.name} is already {already}")
    elif not acted:
        say(f"every node is already {already}")
    if not acted:
        return []
    if on:
        podman.run(["start", *(n.container for n in acted)])
        nodes.wait_booted(paths, [n.name for n in acted])
    else:
        nodes.close_ssh(paths, [n.name for n in acted])
        podman.run(["stop", "--time", "0", *(n.container for n in acted)])
    return [n.name for n in acted]


def replace(paths: LabPaths, name: str) -> Node:
    """Make a node's container again from the lab's image, as a server re-imaged after a disk swap: same name
    and address, nothing of the old system disk; the controller's state volume is kept. `lab provision`
    configures it again."""
    lab = state.require(paths)
    node = lab.node(name)
    nodes.close_ssh(paths, [node.name])
    # an orderly shutdown first: slurmctld writes its state as it stops (a power cut loses the last seconds)
    podman.run(["rm", "--force", "--time", "20", node.container])
    nodes.start(paths, [nodes.NodeSpec(node.name, node.groups, node.ip)], lab.image, str(paths.repo))
    nodes.wait_booted(paths, [node.name])
    return node


def exec_(paths: LabPaths, node: str, command: Sequence[str]) -> int:
    """Run a command in a node over SSH with the terminal attached (as root, like Ansible); its exit status."""
    lab = state.require(paths)
    target = lab.node(node)
    tty = ["-t"] if sys.stdin.isatty() and sys.stdout.isatty() else []
    return subprocess.run(["ssh", "-F", str(paths.ssh_config), *tty, "-o", "LogLevel=ERROR", target.name,
                           shlex.join(command)], check=False).returncode


def status(paths: LabPaths) -> dict[str, object]:
    lab = state.require(paths)
    running = running_containers(paths)
    agent = power_agent.running_pid(paths)
    if (paths.root / "metal").is_dir():  # the metal lab: its power-saved nodes are virtual servers, no agent
        running |= servers.running_servers(paths)
        return {**_status(paths, lab, running), "power_agent": None, "bmcs": _bmcs(paths), "metal": True}
    return {**_status(paths, lab, running),
            "power_agent": {"running": agent is not None, "pid": agent,
                            "log": str(launched.folder(paths) / "agent.log"), "bmcs": _bmcs(paths)}
            if lab.launched else None}


def _status(paths: LabPaths, lab: LabState, running: set[str]) -> dict[str, object]:
    return {"name": lab.name, "controller": lab.controller, "network": lab.network, "image": lab.image,
            "blueprint": lab.blueprint, "ssh_config": str(paths.ssh_config),
            "nodes": [{"name": n.name, "container": n.container, "ip": n.ip, "groups": list(n.groups),
                       "running": n.container in running} for n in lab.nodes],
            "power_saved": [{"name": n.name, "container": n.container, "ip": n.ip, "groups": list(n.groups),
                             "running": n.container in running} for n in lab.launched]}


def _bmcs(paths: LabPaths) -> dict[str, object] | None:
    """The lab's BMC emulator (lab/bmc_service.py): where it answers and its document; None without one."""
    files = bmc_service.BmcFiles.of(paths)
    if not files.settings.is_file():
        return None
    settings = json.loads(files.settings.read_text(encoding="utf-8"))
    return {"url": f"http://{settings['address']}:{settings['port']}", "document": str(files.document),
            "log": str(files.log)}


def down(paths: LabPaths) -> list[str]:
    """Remove every container, network and volume labelled for this lab, then its state; what was removed."""
    lab = state.load(paths)
    removed: list[str] = []
    if power_agent.stop(paths):  # first: nothing starts a node while the lab goes
        removed.append("power agent")
    if (paths.root / "metal").is_dir():  # the metal lab's servers and BMCs
        removed += servers.down(paths)
    if lab is not None:
        nodes.close_ssh(paths, [n.name for n in (*lab.nodes, *lab.launched)])
    label = f"{LABEL}={paths.name}"
    containers = podman.labelled("container", label)
    if containers:
        podman.run(["rm", "--force", "--volumes", "--time", "0", *containers])
        removed += [f"container {c}" for c in containers]
    for kind in ("network", "volume"):
        for name in podman.labelled(kind, label):
            podman.run([kind, "rm", "--force", name])
            removed.append(f"{kind} {name}")
    if paths.root.exists():
        shutil.rmtree(paths.root)
        removed.append(f"state {paths.root}")
    return removed


def purge() -> list[str]:
    """Remove the lab's images and shared cache (base image, node and baked images, apt repository, wheels)
    when no lab uses them; the next `lab up` builds them again."""
    in_use = podman.labelled("container", LABEL)
    if in_use:
        raise ClusterforgeError(Problem(f"labs are still up ({', '.join(in_use[:5])})", "--purge",
                                        hint="`clusterforge lab down --name NAME` for each first"))
    removed = []
    for tag in image.lab_images():
        podman.run(["rmi", tag])
        removed.append(f"image {tag}")
    cache = shared_cache()
    if cache.exists():
        shutil.rmtree(cache)
        removed.append(f"cache {cache}")
    return removed
