"""The bake: a node image with every package the roles install already installed, and what a node needs to configure
itself at boot (lab/selfboot.py), made once per change of its inputs.

One container, the bake node, stands in for every host the image will serve: it is in the groups the caller names
(every SLURM role's, as the lab does, and a pool group whose vars then apply), and site.yml runs only its
`install`-tagged steps on it. The boot phase is added, the node's identity and keys removed (BAKE_CLEANUP), and
the container committed under the caller's tag. Two callers: the lab (`lab up`, lab/cluster.py, tagged by
`bake_inputs`) and `clusterforge image build` (clusterforge/image, tagged by its own inputs).

Where the vendor packages come from is the caller's too: the lab's extra vars (lab/labvars.py: the local
repository of stand-ins) or nothing (the repositories the render names, as a site with network access has them).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.checkout import project_root
from clusterforge.lab import durations, image, nodes, podman, repo, selfboot
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.state import Node
from clusterforge.provision.runner import EventHandler, Run, execute
from clusterforge.render.yamlout import dump_ansible, load

Say = Callable[[str], None]
BAKED_REPO = "localhost/cf-lab-baked"
BAKE_NODE = "bake"
ROLE_GROUPS = ("slurm_controller", "slurm_compute", "slurm_login")
# What the bake node must not pass on to every node: its identity and keys, and the daemons Debian's packages
# enable at install (each node enables only its own: the slurm role).
BAKE_CLEANUP = ("rm -f /etc/ssh/ssh_host_* /etc/munge/munge.key "
                "&& systemctl disable --quiet slurmctld slurmd slurmdbd mariadb prometheus prometheus-alertmanager "
                "&& : > /etc/machine-id && apt-get clean")


@dataclass(frozen=True)
class Recipe:
    """What a bake is made from, as the caller names it.

    `rendered`: a render (its inventory/group_vars/all.yml, and `pool_group`'s group_vars file when it has one);
    `tag`: the image to commit (`repository:inputs`); `groups`: the bake node's groups; `pool_group` and
    `pool_vars`: a pool group the node is also in, with the inventory vars of that pool that apply (None: none);
    `vars_files`: extra vars files, which say where vendor packages come from (the lab's: its local repository;
    none: the repositories the render names); `equivalent`: tags another caller gives an image made from the same
    recipe: one that exists is tagged instead of baking again, and a new bake is tagged with them too."""

    rendered: Path
    tag: str
    groups: tuple[str, ...] = ROLE_GROUPS
    pool_group: str | None = None
    pool_vars: Mapping[str, Any] = field(default_factory=dict)
    vars_files: tuple[Path, ...] = ()
    equivalent: tuple[str, ...] = ()
    extra_vars: Mapping[str, Any] = field(default_factory=dict)  # over the vars files (the lab's: none)
    # commands run on the bake node after the boot phase, before the clean-up (the lab's: none; `image build`'s
    # bootable images: the kernel, clusterforge/image/bootable.py)
    finish: tuple[tuple[str, ...], ...] = ()

    @property
    def repository(self) -> str:
        return self.tag.rpartition(":")[0]


def role_inputs() -> list[Path]:
    """The checkout's files a bake reads: site.yml, the roles' steps (the `install` steps are in several files of a
    role: its installs, the package checks, the health role's own files), the files they copy, their defaults and
    vars, the filters."""
    root = project_root()
    files = [path for path in root.glob("roles/*/files/**/*") if path.is_file()]
    return sorted([root / "site.yml", *root.glob("roles/*/tasks/*.yml"), *files,
                   *root.glob("roles/*/defaults/main.yml"), *root.glob("roles/*/vars/main.yml"),
                   *root.glob("plugins/*/*.py")])


def add_recipe(digest: Any, pins: object) -> None:
    """Feed a digest what every bake depends on beside its base image and package sources: the roles' files, the
    pins, the clean-up and the boot phase's packages and files."""
    root = project_root()
    for path in role_inputs():
        digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    digest.update(repr(pins).encode() + BAKE_CLEANUP.encode() + repr(selfboot.BAKE_PACKAGES).encode())
    for name, (content, mode) in sorted(selfboot.bake_files().items()):
        digest.update(name.encode() + mode.encode() + content)


def roles_applied(rendered: Path) -> dict[str, bool]:
    """Which roles a render applies (its `*_enabled` switches in group_vars/all.yml): the install steps of a role
    that does not apply put nothing in the image, so two blueprints that differ in them (the metal lab has no
    Lustre) must not share a bake."""
    data = load((rendered / "inventory/group_vars/all.yml").read_text(encoding="utf-8")) or {}
    return {key: value for key, value in sorted(data.items()) if key.endswith("_enabled") and isinstance(value, bool)}


def bake_inputs(node_image: str, pins: repo.Pins, rendered: Path) -> str:
    """What the lab's baked image depends on: the node image, the roles' install steps and defaults, the pins, the
    repository and which roles the render applies (not the node count or names: every lab size shares one baked
    image)."""
    digest = hashlib.sha256(podman.inspect("image", node_image)["Id"].encode())
    add_recipe(digest, pins)
    packages = repo.index(pins)
    if packages is None:
        raise ClusterforgeError(Problem("the lab's apt repository has not been made for these pins",
                                        hint="`clusterforge lab up` or `clusterforge image build` makes it"))
    digest.update(packages)
    digest.update(json.dumps(roles_applied(rendered), sort_keys=True).encode())
    return digest.hexdigest()[:12]


def _inventory(groups: Iterable[str]) -> str:
    """The bake's hosts.yml as the lab has always written it: the bake node alone, in every group."""
    return "all:\n  children:\n" + "".join(f"    {g}:\n      hosts:\n        {BAKE_NODE}: {{}}\n" for g in groups)


def write_inventory(recipe: Recipe, folder: Path) -> Path:
    """The bake's inventory in `folder`: hosts.yml, all.yml and the pool group's vars file; its hosts.yml."""
    group_vars = folder / "group_vars"
    group_vars.mkdir(parents=True)
    shutil.copy(recipe.rendered / "inventory/group_vars/all.yml", group_vars / "all.yml")
    groups = [*recipe.groups, *([recipe.pool_group] if recipe.pool_group else [])]
    if recipe.pool_group:
        own = recipe.rendered / "inventory/group_vars" / f"{recipe.pool_group}.yml"
        if own.is_file():
            shutil.copy(own, group_vars / own.name)
    children: dict[str, Any] = {g: {"hosts": {BAKE_NODE: {}}} for g in groups}
    if recipe.pool_group and recipe.pool_vars:
        children[recipe.pool_group]["vars"] = dict(recipe.pool_vars)
        # every string `!unsafe`, as the render writes them: catalog and blueprint values are data, never templates
        text = dump_ansible({"all": {"children": children}})
    else:
        text = _inventory(groups)
    (folder / "hosts.yml").write_text(text)
    return folder / "hosts.yml"


def _install(paths: LabPaths, inventory: Path, recipe: Recipe, on_event: EventHandler | None) -> None:
    # the bake node stands in for every host, the accounting database's and the monitoring host's too
    outcome = execute(Run(
        project=project_root(), inventories=[inventory], private_dir=paths.runner_dir, tags="install",
        extra_vars_files=list(recipe.vars_files), fast=True,
        extra_vars={"slurm_dbd_host": BAKE_NODE, "monitoring_host": BAKE_NODE, "ansible_user": "root",
                    "ansible_ssh_common_args": f"-F {paths.ssh_config}", **recipe.extra_vars},
        env={"ANSIBLE_CACHE_PLUGIN_CONNECTION": str(paths.facts), "ANSIBLE_HOST_KEY_CHECKING": "False",
             "ANSIBLE_SSH_CONTROL_PATH": f"{paths.root}/cp-%%n"}), on_event)
    if not outcome.summary.ok:
        raise ClusterforgeError(outcome.problem("the install steps on the bake node"))


def ensure_baked(paths: LabPaths, node_image: str, recipe: Recipe, say: Say, on_event: EventHandler | None) -> bool:
    """The image `recipe.tag`: the node image with the roles' install steps run on one node in every group of the
    recipe, the boot phase added and the node's identity removed. Whether it was baked now (False: it existed,
    or an equivalent image did and was tagged). Containers and files are `paths`'s (`<name>-bake`)."""
    if podman.exists("image", recipe.tag):
        return False
    for other in recipe.equivalent:
        if podman.exists("image", other):
            say(f"{recipe.tag}: the same inputs as {other}; tagging it")
            podman.run(["tag", other, recipe.tag])
            image.prune(recipe.repository, recipe.tag)
            return False
    groups = [*recipe.groups, *([recipe.pool_group] if recipe.pool_group else [])]
    with durations.timed("bake", say, f"baking {recipe.tag}: the roles' install steps on one node in "
                         f"{', '.join(groups)}, once per change of its inputs"):
        _bake(paths, node_image, recipe, groups, on_event)
    return True


def _bake(paths: LabPaths, node_image: str, recipe: Recipe, groups: list[str],
          on_event: EventHandler | None) -> None:
    subnet = nodes.ensure_network(paths)
    spec = nodes.specs_for({BAKE_NODE: tuple(groups)}, subnet)[0]
    bake_dir = paths.root / "bake"
    shutil.rmtree(bake_dir, ignore_errors=True)
    inventory = write_inventory(recipe, bake_dir / "inventory")
    container = paths.container(BAKE_NODE)
    podman.run(["rm", "--force", "--time", "0", container], check=False)
    paths.repo.mkdir(parents=True, exist_ok=True)  # mounted into every node, used or not
    nodes.start(paths, [spec], node_image, str(paths.repo), keep_state=False)
    try:
        nodes.write_ssh_config(paths, [Node(spec.name, container, spec.ip, spec.groups)])
        nodes.wait_booted(paths, [spec.name])
        _install(paths, inventory, recipe, on_event)
        add_boot_phase(paths)
        run_steps(paths, recipe.finish)
        cleanup = nodes.ssh(paths, BAKE_NODE, ["sh", "-c", BAKE_CLEANUP], control=False)
        if cleanup.returncode != 0:
            raise ClusterforgeError(Problem(f"cleaning the bake node failed: {cleanup.stderr.strip()}", BAKE_NODE))
        nodes.close_ssh(paths, [BAKE_NODE])
        podman.run(["stop", "--time", "10", container])
        podman.run(["commit", "--quiet", container, recipe.tag])
        image.prune(recipe.repository, recipe.tag)
        for other in recipe.equivalent:  # the other caller finds it too
            podman.run(["tag", recipe.tag, other])
    finally:
        podman.run(["rm", "--force", "--time", "0", container], check=False)
        shutil.rmtree(bake_dir, ignore_errors=True)


def add_boot_phase(paths: LabPaths) -> None:
    """What a node needs to configure itself at boot (lab/selfboot.py): ansible-core, the boot script and its
    unit, enabled (it runs only on a node given its vars)."""
    steps = [["apt-get", "install", "-y", "-q", "--no-install-recommends", *selfboot.BAKE_PACKAGES]]
    for path, (content, mode) in selfboot.bake_files().items():
        put = subprocess.run(["ssh", "-F", str(paths.ssh_config), "-o", "BatchMode=yes", "-o", "ControlPath=none",
                              BAKE_NODE, shlex.join(["install", "-D", "-m", mode, "/dev/stdin", path])],
                             input=content, capture_output=True, timeout=60, check=False)
        if put.returncode != 0:
            raise ClusterforgeError(Problem(f"writing {path} on the bake node failed: "
                                            f"{put.stderr.decode(errors='replace').strip()}", BAKE_NODE))
    steps.append(["systemctl", "enable", "--quiet", PurePosixPath(selfboot.UNIT).name])
    run_steps(paths, steps)


def run_steps(paths: LabPaths, steps: Iterable[Sequence[str]]) -> None:
    """Run each command on the bake node in turn; the first that fails fails the bake, with its error's tail."""
    for step in steps:
        done = nodes.ssh(paths, BAKE_NODE, list(step), timeout=600, control=False)
        if done.returncode != 0:
            raise ClusterforgeError(Problem(f"{shlex.join(step)} on the bake node failed: {done.stderr.strip()[-300:]}",
                                            BAKE_NODE))
