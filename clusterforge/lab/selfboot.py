"""Nodes that configure themselves (`lab up --boot self`): the control host starts containers and waits; each node
runs the boot phase of site.yml on itself, in Ansible's local mode, at boot.

The baked image (cluster.ensure_baked) holds everything that does not depend on who a node is: the packages the
roles' `install` steps put there, ansible-core, and the boot unit and script (data/clusterforge-boot*). What does
depend on it is given to the node, read-only, as a provisioning server or cloud-init gives it to a server:

- /etc/clusterforge/boot: `node.env` (cluster, controller, shared file system), `vars.yml` (the lab's extra vars
  for a node configuring itself), `nodes.yml` (every node's address, for /etc/hosts) and `render/` (the rendered
  inventory and SLURM files);
- /etc/clusterforge/secrets: the munge key and, on the accounting host, the slurmdbd password, files of mode 0600
  owned by root on the control host, so root only on the node; jobs never read them;
- /usr/share/clusterforge/ansible: site.yml and the roles of this tree, and the collections they name (the
  roles' own, clusterforge.cluster, is this tree's plugins/).

The node writes its result to the shared volume (`.clusterforge/boot/<node>`): the control host reads one folder
instead of asking every node, so its work per node is starting a container. `lab provision` (SSH push) repairs a
node as before.

Every node starts at once, as a cluster's servers do when it is powered on, the controllers' containers first. A
node does not wait for the controller to finish: its slurmd, configless, asks slurmctld for its configuration
and retries every 10 s until slurmctld answers, so it registers within seconds of slurmctld starting. Started one
after the other instead (the controller's whole boot phase, then the nodes'), the nodes met slurmctld's first
ping minutes before their slurmd existed; a node that has not answered SlurmdTimeout after that ping is set
DOWN ("not responding"), which on a loaded machine is every node whose boot phase outlasts SlurmdTimeout.
"""

from __future__ import annotations

import secrets
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_bytes, write_text
from clusterforge.files.checkout import project_root
from clusterforge.lab import podman
from clusterforge.lab.nodes import SHARED_MOUNT, NodeSpec, waited_on
from clusterforge.lab.paths import LabPaths

BOOT = "/etc/clusterforge/boot"
SECRETS = "/etc/clusterforge/secrets"
TREE = "/usr/share/clusterforge/ansible"
COLLECTIONS = "/usr/share/ansible/collections/ansible_collections"
# mitogen's strategy runs the boot phase's ~170 steps in one Python process instead of one per step: 3x faster
# on a node (the boot script uses it where it is mounted); the control host's pinned copy, as for push
MITOGEN = "/usr/share/clusterforge/mitogen"
MITOGEN_PACKAGES = ("mitogen", "ansible_mitogen")
NAMESPACES = ("community", "ansible/posix")  # the collections the roles name beside ansible.builtin
SCRIPT = "/usr/lib/clusterforge/clusterforge-boot"
UNIT = "/etc/systemd/system/clusterforge-boot.service"
# What the bake adds for nodes that configure themselves (part of the baked image's inputs)
BAKE_PACKAGES = ("ansible-core",)
# clusterforge: the power-save programs' modules, which the slurm role copies to a controller from the tree
TREE_PARTS = ("site.yml", "ansible.cfg", "roles", "clusterforge")
OWN_COLLECTION = "clusterforge/cluster"  # the roles name their filter clusterforge.cluster.missing_packages
MUNGE_KEY_SIZE = 1024  # bytes, as roles/munge makes it
STATUS = Path(".clusterforge") / "boot"


def data(name: str) -> bytes:
    return (resources.files("clusterforge.lab") / "data" / name).read_bytes()


def bake_files() -> dict[str, tuple[bytes, str]]:
    """The files the bake writes into the image, with their modes: the boot script and its unit."""
    return {SCRIPT: (data("clusterforge-boot"), "0755"), UNIT: (data("clusterforge-boot.service"), "0644")}


def ensure_secrets(paths: LabPaths) -> dict[str, Path]:
    """The lab's munge key and slurmdbd password on the control host (made once, mode 0600), where the push path
    keeps them too (lab vars `munge_key_file`, `slurm_dbd_password_file`), so a later `lab provision` agrees."""
    munge, dbd = paths.root / "munge.key", paths.root / "slurmdbd.password"
    if not munge.is_file() or munge.stat().st_size != MUNGE_KEY_SIZE:
        write_bytes(munge, secrets.token_bytes(MUNGE_KEY_SIZE), mode=0o600)
    if not dbd.is_file():
        alphabet = string.ascii_letters + string.digits
        write_bytes(dbd, "".join(secrets.choice(alphabet) for _ in range(32)).encode(), mode=0o600)
    return {"munge.key": munge, "slurmdbd.password": dbd}


def boot_vars(lab_vars: dict[str, Any]) -> dict[str, Any]:
    """The lab's extra vars as a node running on itself reads them: no SSH, its secrets where they are mounted,
    its munge key kept by itself (its key steps delegated to itself run in the interpreter its other steps run in:
    delegated to `localhost`, they started a second one, 4-5 s of a container node's boot phase, 8-10 s under
    software emulation), and the checks that need another node done on itself (munge) or left to the lab's first
    job (MPI)."""
    out = {key: value for key, value in lab_vars.items() if key not in ("ansible_user", "ansible_ssh_common_args")}
    return out | {"munge_key_file": f"{SECRETS}/munge.key", "slurm_dbd_password_file": f"{SECRETS}/slurmdbd.password",
                  "munge_key_host": "{{ inventory_hostname }}", "munge_verify_host": "{{ inventory_hostname }}",
                  "slurm_verify_mpi": False, "slurm_self_boot": True}


def write_boot_dir(paths: LabPaths, cluster: str, controller: str, specs: Sequence[NodeSpec],
                   lab_vars: dict[str, Any], launched: Sequence[NodeSpec] = ()) -> Path:
    """<lab>/boot: what every node is given for itself (the render is mounted beside it). The nodes of power-saved
    pools (`launched`), which the rendered inventory lists in no group, are put into their pool's group here, as
    the one-host inventory of a cloud node does (targets/aws/userdata_boot.py)."""
    boot = paths.root / "boot"
    (boot / "render").mkdir(parents=True, exist_ok=True)  # where the render is mounted, inside this read-only one
    env = {"CLUSTERFORGE_CLUSTER": cluster, "SLURM_CONTROLLER": controller, "CLUSTERFORGE_SHARED": SHARED_MOUNT}
    # CLUSTERFORGE_NODE is the container's hostname, read by the script: one file serves every node
    write_text(boot / "node.env", "".join(f"{k}={v}\n" for k, v in env.items()) + 'CLUSTERFORGE_NODE=$(hostname)\n')
    write_text(boot / "vars.yml", yaml.safe_dump(boot_vars(lab_vars), sort_keys=True, width=120))
    nodes: dict[str, Any] = {"all": {"hosts": {spec.name: {"node_ip": spec.ip} for spec in (*specs, *launched)}}}
    for spec in launched:  # its pool's group comes first in its groups (lab/launched.py)
        nodes["all"].setdefault("children", {}).setdefault(spec.groups[0], {"hosts": {}})["hosts"][spec.name] = {}
        # first named here, so Ansible's inventory_dir is this folder: the render's SLURM files are not beside it
        nodes["all"]["hosts"][spec.name]["slurm_config_dir"] = f"{BOOT}/render/slurm"
    write_text(boot / "nodes.yml", yaml.safe_dump(nodes, sort_keys=True))
    return boot


def mitogen_dir() -> Path | None:
    """Where this checkout's mitogen and ansible_mitogen are installed (None: not installed, the boot phase runs
    on Ansible's own strategy)."""
    import importlib.util

    spec = importlib.util.find_spec("ansible_mitogen")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent.parent


def collections_dir() -> Path:
    """The collections of this checkout's Ansible installation (the roles name a few of them)."""
    import importlib.util

    spec = importlib.util.find_spec("ansible_collections")
    if spec is None or not spec.submodule_search_locations:
        raise ClusterforgeError(Problem("Ansible's collections are not installed here",
                                        hint="pip install -e '.[ansible]'"))
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class Given:
    """The read-only volumes every node configuring itself is given, worked out once per `lab up` (the secrets made,
    the collections found), and the accounting host's one more."""

    common: tuple[str, ...]
    accounting: tuple[str, ...]

    @classmethod
    def of(cls, paths: LabPaths, boot: Path) -> Given:
        tree, collections, found = project_root(), collections_dir(), ensure_secrets(paths)
        common = ["--volume", f"{boot}:{BOOT}:ro", "--volume", f"{paths.render}:{BOOT}/render:ro",
                  "--volume", f"{found['munge.key']}:{SECRETS}/munge.key:ro"]
        for namespace in NAMESPACES:
            common += ["--volume", f"{collections / namespace}:{COLLECTIONS}/{namespace}:ro"]
        for part in TREE_PARTS:
            common += ["--volume", f"{tree / part}:{TREE}/{part}:ro"]
        common += ["--volume", f"{tree / 'plugins'}:{COLLECTIONS}/{OWN_COLLECTION}/plugins:ro"]
        mitogen = mitogen_dir()
        if mitogen is not None:
            common += [arg for package in MITOGEN_PACKAGES
                       for arg in ("--volume", f"{mitogen / package}:{MITOGEN}/{package}:ro")]
        return cls(tuple(common), ("--volume", f"{found['slurmdbd.password']}:{SECRETS}/slurmdbd.password:ro"))

    def mounts(self, spec: NodeSpec) -> list[str]:
        """A node's options: the common ones, and the slurmdbd password where slurmdbd may run."""
        return [*self.common, *(self.accounting if waited_on(spec) else ())]


@dataclass(frozen=True)
class Booted:
    """One node's boot phase as it reported it: ok, how long it took on the node, how many steps ran, and the
    failed step when it failed."""

    node: str
    ok: bool
    seconds: int
    tasks: int
    step: str = ""


def parse_status(node: str, line: str) -> Booted:
    word, _, rest = line.strip().partition(" ")
    seconds, _, rest = rest.partition(" ")
    tasks, _, step = rest.partition(" ")
    return Booted(node, word == "ok", int(seconds or 0), int(tasks or 0), step)


def status_dir(paths: LabPaths) -> Path:
    """Where the nodes report, on the control host: the shared volume's folder (read without entering a node)."""
    mountpoint = podman.inspect("volume", f"{paths.name}-shared")["Mountpoint"]
    return Path(str(mountpoint)) / STATUS


def clear_status(paths: LabPaths, names: Sequence[str]) -> None:
    folder = status_dir(paths)
    for name in names:
        (folder / name).unlink(missing_ok=True)


def wait(paths: LabPaths, names: Sequence[str], timeout: float, say: Callable[[str], None]) -> dict[str, Booted]:
    """Each node's report, once all of `names` reported (a ClusterforgeError naming the silent ones after
    `timeout`)."""
    folder = status_dir(paths)
    deadline = time.monotonic() + timeout
    found: dict[str, Booted] = {}
    while True:
        for name in names:
            if name not in found and (folder / name).is_file():
                text = (folder / name).read_text(encoding="utf-8")
                if text.endswith("\n"):
                    found[name] = parse_status(name, text)
                    say(f"  {name}: {'configured itself' if found[name].ok else 'FAILED'} in "
                        f"{found[name].seconds} s ({found[name].tasks} steps)"
                        + (f": {found[name].step}" if not found[name].ok else ""))
        if len(found) == len(names):
            return found
        if time.monotonic() > deadline:
            silent = sorted(set(names) - set(found))
            raise ClusterforgeError(Problem(
                f"{len(silent)} node(s) did not finish their boot phase within {timeout:.0f} s: {', '.join(silent)}",
                str(folder), hint=f"podman exec {paths.container(silent[0])} cat /var/log/clusterforge-boot.log"))
        time.sleep(0.5)


def start(paths: LabPaths, cluster: str, controller: str, specs: Sequence[NodeSpec], image: str, repo: str,
          lab_vars: dict[str, Any], say: Callable[[str], None], launched: Sequence[NodeSpec] = (),
          more: Callable[[NodeSpec], list[str]] | None = None) -> dict[str, Booted]:
    """Start every node from the baked image at once, given what it needs to configure itself (the controllers'
    and the accounting host's containers first); each node's report once all have made one.

    The lab's nodes share the host's cores, so a wave of N nodes may take N times one node's boot phase: the
    wait allows a minute per node on top of ten."""
    from clusterforge.lab import nodes

    boot = write_boot_dir(paths, cluster, controller, specs, lab_vars, launched)
    given = Given.of(paths, boot)

    def mounts(spec: NodeSpec) -> list[str]:
        return [*given.mounts(spec), *(more(spec) if more is not None else [])]

    first = [spec for spec in specs if waited_on(spec)]
    ordered = [*first, *(spec for spec in specs if spec not in first)]
    names = [spec.name for spec in ordered]
    if not ordered:
        return {}
    say(f"starting {len(ordered)} node(s) that configure themselves: {', '.join(names)}")
    nodes.start(paths, ordered, image, repo, given=mounts)
    clear_status(paths, names)  # the shared volume exists once a node started
    return wait(paths, names, 600 + 60 * len(ordered), say)
