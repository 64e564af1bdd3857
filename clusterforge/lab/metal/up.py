"""`lab up --metal`: the controller as a container that configures itself (lab/selfboot.py), the compute servers
as virtual machines behind BMCs that boot the baked image from the controller's provisioning service and join
SLURM by themselves; SLURM powers them through the same on-prem power-save provider a site uses.

The steps, each the on-prem path a site runs (docs/bare-metal.md):
1. the render, whose address plan (site.networks) gives every node its address on the lab's bridge;
2. the node image built (`image build`) and packed for a stateless boot (clusterforge/netboot);
3. the controller configures itself, given the BMC document, the packed image and the overlays;
4. the servers defined in libvirt, their BMCs started: Redfish (sushy-tools' libvirt driver) and IPMI
   (VirtualBMC);
5. each server's MAC read through its BMC (`power inventory`) and rendered into the DHCP reservations (`render
   --macs`);
6. the provisioning role run on the controller: dnsmasq, iPXE and nginx serve the reservations and the image;
7. SLURM powers the servers on for the smoke job (`srun -N2 hostname`): its resume program asks their BMCs, each
   boots from the network and registers.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.checkout import project_root
from clusterforge.lab import bmc_service, cluster, nodes, podman, selfboot
from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.metal import bmcs, boot_service, vbmc, virt
from clusterforge.lab.metal.console import Console, tail
from clusterforge.lab.paths import LabPaths, shared_cache
from clusterforge.lab.render import group_vars
from clusterforge.lab.state import LabState
from clusterforge.provision.runner import EventHandler, Run, execute

Say = Callable[[str], None]
PLAYBOOK = "provisioning.yml"
JOIN_S = 1500  # power-on to the first job on both servers, under software emulation on a loaded 2-core host
NO_KERNEL_S = 300  # power-on to the kernel's first line (measured: 21-22 s), or the network boot loaded nothing
# power-on to the image mounted (measured: 33-70 s; the initramfs's fetch gives a stalled transfer 60 s, three
# times), or the initramfs is stuck: said at once, not at slurmctld's ResumeTimeout twenty minutes on
NO_IMAGE_S = 600
# what each server's console says on the way to SLURM, in order (netboot/data/init, image/bootable.BOOT_LINE)
MILESTONES = (("kernel", "the kernel's first line", "Linux version"),
              ("fetch", "the image's fetch starts", "clusterforge-netboot: fetching the image"),
              ("image", "the image fetched and mounted", "clusterforge-netboot: image and overlays in place"),
              ("boot_unit", "the boot unit starts", "clusterforge-boot: the boot phase starts"))
# what a console says when a boot failed: the initramfs's step (netboot/data/init), the boot phase's (lab/data)
FAILURES = ("clusterforge-netboot: FAILED", "clusterforge-boot: FAILED")
STATE_EVERY_S = 10  # how often the wait asks libvirt whether each server still runs
SHOWN_SERVERS = 4  # a failed wait shows where this many servers stood (the metal lab has two)


@dataclass
class Metal:
    """The metal lab as `up` made it: its servers, the BMCs' URL, and when each step finished."""

    lab: LabState
    servers: list[virt.Server]
    bmc_url: str
    timings: cluster.Timings
    boots: dict[str, dict[str, float]] = field(default_factory=dict)


def servers_of(paths: LabPaths, launched: Sequence[nodes.NodeSpec], bridge: str) -> list[virt.Server]:
    return [virt.Server(spec.name, f"{paths.name}-{spec.name}", bmc_service.system_id(paths.name, spec.name),
                        virt.mac_of(paths.name, spec.name), bridge) for spec in launched]


def bridge_of(paths: LabPaths) -> str:
    """The lab network's bridge on this host (podman names it; it exists once a container is on the network)."""
    return str(podman.inspect("network", paths.network)["network_interface"])


def node_image(blueprint: Path, catalogs: Sequence[Path], say: Say, on_event: EventHandler | None) -> str:
    """The blueprint's bootable node image (`image build`: baked once per change of its inputs); its tag."""
    from clusterforge.image.build import build as bake_images
    from clusterforge.image.build import rendered
    from clusterforge.image.plan import LAB_SOURCES
    from clusterforge.pipeline.analysis import PolicyInputs

    with rendered(blueprint, PolicyInputs(catalogs=tuple(catalogs)), LAB_SOURCES, True) as (render_dir, found):
        results = bake_images(render_dir, found, say, on_event)
    return results[0].image.tag


def clusterforge(*args: str) -> subprocess.CompletedProcess[str]:
    """This clusterforge's own command, as an operator runs it."""
    proc = subprocess.run([sys.executable, "-m", "clusterforge", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        said = (proc.stdout + proc.stderr).strip()[-900:]  # a report on stdout, the error on stderr
        raise ClusterforgeError(Problem(f"clusterforge {args[0]} {args[1]} failed: {said}",
                                        args[0]))
    return proc


def up(paths: LabPaths, blueprint: Path, catalogs: Sequence[Path], say: Say,
       on_event: EventHandler | None) -> Metal:
    """Bring the metal lab up to the point where SLURM may power its servers; the caller runs the smoke job."""
    from clusterforge.netboot import artifacts

    virt.require()
    made = cluster.prepare(paths, blueprint, catalogs, None, False, say, on_event, metal=True,
                           bmc_emulator=bmcs.environment)
    lab, specs, timings = made.lab, made.specs, made.timings
    if not made.launched:
        raise ClusterforgeError(Problem("the metal lab's blueprint has no pool SLURM powers through BMCs",
                                        str(blueprint), hint="a pool with bmc: redfish and a max_count"))
    tag = node_image(blueprint, catalogs, say, on_event)
    packed = artifacts.from_image(tag, shared_cache() / "netboot", say)
    manifest = packed.manifest()
    say(f"node image {tag} packed for a network boot: image {int(str(manifest['image_bytes'])) / 1e6:.0f} MB, "
        f"kernel {manifest['kernel_version']}")
    timings.mark("bootable image")
    folder = boot_service.BootFolder.of(paths, packed)
    lab_vars = yaml.safe_load(paths.extra_vars.read_text(encoding="utf-8"))
    name = str(group_vars(paths.render)["clusterforge_cluster"])
    boot = selfboot.write_boot_dir(paths, name, lab.controller, specs, lab_vars | boot_service.SERVER_VARS,
                                   made.launched)
    boot_service.write_overlays(folder, selfboot.Given.of(paths, boot), made.launched,
                                paths.ssh_key.with_suffix(".pub").read_bytes(), say)
    more = made.controller_mounts(paths)

    def controller_given(spec: nodes.NodeSpec) -> list[str]:
        own = folder.controller_mounts() if cluster.CONTROLLER in spec.groups else []
        return [*more(spec), *own]

    selfboot.start(paths, name, lab.controller, specs, lab.image, str(paths.repo), lab_vars, say,
                   made.launched, controller_given)
    nodes.write_ssh_config(paths, [*lab.nodes, *lab.launched])
    timings.mark("controller configured itself")
    servers = servers_of(paths, made.launched, bridge_of(paths))
    program = virt.emulator()
    for server in servers:
        virt.define(server, paths.root / "metal" / "domains", program)
    files = BmcFiles.of(paths)
    url = bmcs.start(files)
    ipmi = vbmc.start(files, servers)
    say(f"{len(servers)} virtual servers defined ({', '.join(s.domain for s in servers)}), their BMCs at {url} "
        f"(Redfish) and over IPMI ({ipmi.document})")
    timings.mark("servers and BMCs")
    macs = paths.root / "metal" / "macs.yaml"
    nodelist = ",".join(s.node for s in servers)
    clusterforge("power", "inventory", nodelist, "--bmcs", str(files.document), "--credentials",
                 str(files.credentials), "-o", str(macs))
    reservations = paths.root / "metal" / "render"
    clusterforge("render", str(blueprint), *(a for c in catalogs for a in ("--catalog", str(c))), "--macs", str(macs),
                 "-o", str(reservations))
    say(f"MACs read through the BMCs into {macs}; DHCP reservations rendered: {reservations}/provisioning/dhcp-hosts")
    controller = lab.node(lab.controller)
    outcome = execute(Run(project=project_root(), inventories=[paths.render / "inventory/hosts.yml"],
                          private_dir=paths.runner_dir, playbook=PLAYBOOK, limit=lab.controller,
                          extra_vars_files=[paths.extra_vars],
                          extra_vars=boot_service.role_vars(made.subnet, controller.ip, reservations),
                          env=cluster.ansible_env(paths)), on_event)
    if outcome.rc != 0:
        raise ClusterforgeError(outcome.problem(f"the provisioning role on {lab.controller}"))
    timings.mark("provisioning service")
    say(f"provisioning service up on {lab.controller} ({controller.ip}): DHCP, iPXE, the image over HTTP")
    return Metal(lab, servers, url, timings)


def watch(servers: Sequence[virt.Server], started: float, until: Callable[[], bool], timeout: float,
          say: Say, no_kernel_s: float = NO_KERNEL_S, no_image_s: float = NO_IMAGE_S,
          state: Callable[[virt.Server], str] = virt.state_and_reason) -> dict[str, dict[str, float]]:
    """Each server's milestones (seconds from `started`) as its console shows them, until `until()` holds. A
    console that says the network boot or the boot phase failed ends the wait at once, with what it printed, and
    so does a server whose kernel never started: its network boot found nothing to load (its boot order, its DHCP
    reservation, the provisioning service), one whose initramfs never mounted the image, and one that stopped
    running after it started (its QEMU killed or crashed: nothing would say so but slurmctld's ResumeTimeout,
    twenty minutes later)."""
    seen: dict[str, dict[str, float]] = {s.node: {} for s in servers}
    consoles = {s.node: Console(s.console) for s in servers}
    running: set[str] = set()
    deadline = time.monotonic() + timeout
    asked = 0.0
    while True:
        for server in servers:
            console = consoles[server.node]
            text = console.look()
            failed = console.failure(FAILURES)
            if failed is not None:
                raise ClusterforgeError(Problem(f"{server.node} did not boot: {failed}", str(server.console)))
            for key, words, marker in MILESTONES:
                if key not in seen[server.node] and marker in text:
                    seen[server.node][key] = round(time.monotonic() - started, 1)
                    say(f"  {server.node}: {words} at {seen[server.node][key]:.0f} s")
        if until():
            return seen
        if time.monotonic() - asked >= STATE_EVERY_S:
            asked = time.monotonic()
            stopped(servers, running, state, seen)
        silent = [s for s in servers if "kernel" not in seen[s.node]]
        if silent and time.monotonic() - started > no_kernel_s:
            raise ClusterforgeError(Problem(
                f"no kernel started on {', '.join(s.node for s in silent)} within {no_kernel_s:.0f} s of power-on: "
                "the network boot loaded nothing", str(silent[0].console),
                hint="the server's boot order (network first), its DHCP reservation (dhcp-hosts, `power inventory`), "
                     "and dnsmasq's and nginx's logs on the provisioning server"))
        stuck = [s for s in servers if "kernel" in seen[s.node] and "image" not in seen[s.node]]
        if stuck and time.monotonic() - started > no_image_s:
            raise ClusterforgeError([Problem(
                f"no image mounted on {', '.join(s.node for s in stuck)} within {no_image_s:.0f} s of power-on: "
                "its initramfs is stuck", str(stuck[0].console),
                hint="the provisioning server's nginx log (/var/log/nginx/) and the server's console"),
                *where_they_stand(stuck, seen)])
        if time.monotonic() > deadline:
            raise ClusterforgeError([Problem(f"the servers did not join SLURM within {timeout:.0f} s",
                                             str(servers[0].console), hint="read the consoles"),
                                     *where_they_stand(servers, seen)])
        time.sleep(1)


def stopped(servers: Sequence[virt.Server], running: set[str], state: Callable[[virt.Server], str],
            seen: dict[str, dict[str, float]]) -> None:
    """Note which servers libvirt says run; one seen running that no longer does ends the wait, with libvirt's
    reason and the end of QEMU's own log (where a killed or crashed QEMU says why)."""
    for server in servers:
        now = state(server)
        if now.startswith("running"):
            running.add(server.node)
        elif server.node in running:
            said = " | ".join(tail(virt.qemu_log(server), lines=6).splitlines()) or "(nothing)"
            raise ClusterforgeError([Problem(
                f"{server.node} stopped before it joined SLURM: libvirt says it is {now or 'not defined'}; QEMU's "
                f"log ends: {said}", str(virt.qemu_log(server)),
                hint="the host's memory (`dmesg` for the OOM killer) and libvirtd's log"),
                *where_they_stand([server], seen)])


def where_they_stand(servers: Sequence[virt.Server], seen: dict[str, dict[str, float]]) -> list[Problem]:
    """Each server's last milestone and the end of its console (bounded), one problem each at its console: where a
    boot stood when a wait ended without a failure line, say a fetch that stalled or a kernel that stopped."""
    problems = []
    for server in servers[:SHOWN_SERVERS]:
        reached = [words for key, words, _ in MILESTONES if key in seen.get(server.node, {})]
        ends = " | ".join(tail(server.console, lines=8).splitlines()) or "(nothing)"
        problems.append(Problem(f"{server.node}'s last milestone: {reached[-1] if reached else 'none'}; its console "
                                f"ends: {ends}", str(server.console)))
    return problems


def record(paths: LabPaths, made: Metal, seconds: float) -> Path:
    """The boot's figures (each server's milestones, the whole from the job's start) in the lab's folder, for the
    benchmark and the docs; the file."""
    import json

    from clusterforge.files.atomic import write_text

    out = paths.root / "metal" / "boot-times.json"
    write_text(out, json.dumps({"servers": made.boots, "job_seconds": round(seconds, 1),
                                "steps": [[step, round(took, 1)] for step, took in made.timings.steps]}, indent=2)
               + "\n")
    return out


def dhcp_times(paths: LabPaths, controller: str, since: float) -> dict[str, float]:
    """When each server got its first DHCP lease after `since` (wall clock), in seconds from it: the firmware's
    (iPXE's), from the provisioning server's own log, since a server's console shows nothing before its kernel."""
    proc = nodes.ssh(paths, controller, ["journalctl", "-u", "dnsmasq", "-o", "short-unix", "--no-pager",
                                         "--since", f"@{int(since)}"], timeout=30)
    found: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[2].startswith("dnsmasq-dhcp") and fields[3].startswith("DHCPACK"):
            node = fields[6] if len(fields) > 6 else ""
            if node and node not in found:
                found[node] = round(float(fields[0]) - since, 1)
    return found


def first_job(paths: LabPaths, made: Metal, say: Say) -> str:
    """`srun -N<servers> hostname` from the controller: SLURM powers the servers on through their BMCs, and each
    one's boot is shown from its console as it goes; the job's output. The figures go to `record`'s file."""
    command = ["srun", f"-N{len(made.servers)}", "--time=5", "hostname"]
    say(f"== {' '.join(command)}, from {made.lab.controller}: SLURM powers the servers on through their BMCs; each "
        "boots from the network (minutes under software emulation)")
    job = nodes.ssh_popen(paths, made.lab.controller, command)
    powered, wall = time.monotonic(), time.time()
    made.boots = watch(made.servers, powered, lambda: job.poll() is not None, JOIN_S, say)
    for node, seconds in dhcp_times(paths, made.lab.controller, wall).items():
        made.boots.setdefault(node, {})["dhcp"] = seconds
    output, errors = job.communicate()
    made.timings.mark("servers booted and first srun")
    if job.returncode != 0:
        raise ClusterforgeError([Problem(f"{' '.join(command)} failed: {errors.strip()[-300:]}", made.lab.controller,
                                         hint=f"clusterforge lab exec --name {paths.name} {made.lab.controller} -- "
                                              "sinfo -R"),
                                 *where_they_stand(made.servers, made.boots)])
    record(paths, made, time.monotonic() - powered)
    return output
