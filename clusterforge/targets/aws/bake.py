"""What the stack bakes into its node images and what each node reads at first boot (pure, no Pulumi).

The roles split by tag: `install` steps (packages, drivers, libraries, SLURM binaries) depend on no node's
identity, so EC2 Image Builder runs them once per image, on a build instance that stands in for every host (in
every SLURM group, with the pool's GPU vars), as the lab's bake node does. Everything else is the boot phase,
which each node runs on itself at first boot (`userdata.boot_script`).

One image per install profile: the GPU vendor of its pools (NVIDIA, AMD, Trainium), split again where a pool
pins its own software. Pools without accelerators (controller, login) share the image of the cluster's vendor,
whose driver they leave unused. The profile splits by CPU architecture too (the catalog's `architecture` of the
pool's instance type): an arm64 pool gets an image of its own (`<key>-arm64`), baked on an arm64 build instance
from the arm64 twin of the base AMI parameter (`StackSettings.parent_parameter`), as x86_64 pools get theirs.

A bake installs packages from the internet, so the build needs a route there: a NAT gateway (`natGateway`), or
a mirror or route of the user's own (`packageMirror`). Without one `check_route` refuses the preview: the build
would fail after up to BAKE_TIMEOUT of `pulumi up`, with the rest of the stack already created.

An image is named by a hash of what it is made from (the roles bundle's digest, the vars the build writes, the
parent AMI, the build steps), so `pulumi up` bakes again only when one of those changes, never for a change in
node count.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import yaml

from clusterforge.blueprint.load import Loaded
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.plan import Plan, build_plan
from clusterforge.render import render_files
from clusterforge.render.context import RenderContext
from clusterforge.render.group_vars import cluster_vendor, group_vars, pool_vars
from clusterforge.render.inventory import pool_group
from clusterforge.render.inventory import pool_vars as pool_group_vars
from clusterforge.render.yamlout import dump_ansible
from clusterforge.targets.aws.boot_access import VARS_PREFIX
from clusterforge.targets.aws.design import TARGET, with_controller
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.settings import DEFAULT_ARCHITECTURE, STACK_CONFIG, StackSettings
from clusterforge.targets.aws.userdata_boot import ANSIBLE_DIR, BASE, VENV

BAKE_DIR = f"{BASE}/bake"  # the build's inventory and vars; removed before the image is taken
BAKE_HOST = "bake"
ROLE_GROUPS = ("slurm_controller", "slurm_compute", "slurm_login")
# The versions requirements/lock.txt pins (ansible bundles the collections the roles use); boto3 fetches the
# node config and the munge key at boot and, with pydantic, runs the power-save programs on the controller.
# ansible-core 2.19 needs Python 3.11 or later on the node itself.
PYTHON_PACKAGES = ("ansible-core==2.19.14", "ansible==12.3.0", "boto3==1.35.0", "pydantic==2.13.4")
# What must not be in an image every node shares: host keys, the machine id, munge's key (the package makes
# one), the daemons' enablement (the boot phase decides which run here) and the build's own files.
CLEANUP = (
    f"rm -rf {BAKE_DIR} {BASE}/roles.tar.gz /root/.cache/clusterforge /root/.ansible",
    "rm -f /etc/ssh/ssh_host_* /etc/munge/munge.key",
    "for unit in slurmctld slurmd slurmdbd mariadb munge prometheus prometheus-alertmanager; do "
    "systemctl disable --quiet \"$unit\" 2>/dev/null || true; done",
    "truncate -s 0 /etc/machine-id && rm -f /var/lib/dbus/machine-id",
    "apt-get clean || true",
)
CONFIG_DIRS = ("slurm/",)


@dataclass(frozen=True)
class ImageDesign:
    """One image: its key (`nvidia`, `amd`, `aws`, `cpu`, or `<vendor>-<pool>` for a pool with its own pins),
    the pools that boot from it, and the vars of the build instance (all.yml with the pool's vars)."""

    key: str
    pools: tuple[str, ...]
    bake_vars: dict[str, Any] = field(hash=False)
    architecture: str = DEFAULT_ARCHITECTURE


@dataclass(frozen=True)
class ParentImage:
    """Where an image of another architecture than x86_64 starts: the SSM parameter of its base AMI, and the
    instance type that builds it (a build runs the image's own binaries)."""

    parameter: str
    build_instance_type: str


@dataclass(frozen=True)
class NodeConfig:
    """The images to bake and the rendered files every node reads at boot (`image_bundle.config_bundle`); the
    parent of each architecture but x86_64's, whose parent is the stack's base image (compute.image)."""

    images: tuple[ImageDesign, ...]
    files: dict[str, str] = field(hash=False)
    parents: dict[str, ParentImage] = field(default_factory=dict, hash=False)

    def image_of(self, pool: str) -> str:
        return next(image.key for image in self.images if pool in image.pools)


def check_route(settings: StackSettings) -> None:
    """Refuse a bake that cannot reach its packages (apt, pip, the GPU vendors' repositories): the private
    subnets have only the S3 and SSM endpoints unless the stack adds a NAT gateway or the user says they reach
    a mirror (`packageMirror`)."""
    if settings.nat_gateway or settings.package_mirror:
        return
    raise ClusterforgeError(Problem(
        "the node image is baked in the stack's private subnets, which have no route to package repositories "
        "(natGateway is false): the build would fail after up to three hours of pulumi up", STACK_CONFIG,
        path="natGateway",
        hint="set natGateway: true; or packageMirror: true where the VPC reaches a mirror or proxy of its own; or "
             "pin aws.ami to an image baked elsewhere"))


def architecture(loaded: Loaded, hardware: str) -> str:
    """The CPU architecture of a pool's instance type (the catalog's; x86_64 for anything but an EC2 type)."""
    entry = loaded.catalog.get(hardware)
    return entry.architecture if isinstance(entry, Ec2Instance) else DEFAULT_ARCHITECTURE


def cluster_plan(loaded: Loaded, settings: StackSettings, planned: Plan | None) -> Plan:
    """The plan `design.design` builds from (the policy check's when given), with the stack's controller (a
    hybrid's stays on premises: its plan is the blueprint's, as `render` makes it)."""
    if planned is not None and planned.slurm is not None:
        return planned
    cluster = loaded.cluster
    if cluster.target == TARGET:
        cluster, _ = with_controller(cluster, settings.controller_instance_type)
    return build_plan(cluster, loaded.catalog)


def _images(ctx: RenderContext, everything: dict[str, Any], cloud: Collection[str] | None) -> tuple[ImageDesign, ...]:
    """Pools grouped by install profile: (GPU vendor, the pool's own pins). A pool without accelerators has the
    cluster's vendor and joins that vendor's image; the build gets the vars of the profile's first GPU pool, so
    it installs the driver those GPUs need (a profile of no GPU pool is a `cpu` image, built from all.yml).
    `cloud`: the pools the stack builds (a hybrid's on-prem pools boot no AMI); None, every pool."""
    plan = ctx.plan
    own = pool_vars(ctx)
    main = cluster_vendor(plan)
    profiles: dict[tuple[str, str, str], list[str]] = {}
    gpu_vars: dict[tuple[str, str, str], dict[str, Any]] = {}
    for pool in plan.nodes:
        if cloud is not None and pool.pool not in cloud:
            continue
        mine = own.get(pool_group(pool.pool), {})
        pins = json.dumps({k: v for k, v in mine.items() if k != "gpu_vendor"}, sort_keys=True, default=str)
        vendor = pool.gpu_vendor if pool.gpu_count and pool.gpu_vendor else None
        profile = (vendor or main, architecture(ctx.loaded, pool.hardware), pins)
        profiles.setdefault(profile, []).append(pool.pool)
        if vendor is not None and profile not in gpu_vars:
            gpu_vars[profile] = pool_group_vars(pool, plan) | mine
    out: list[ImageDesign] = []
    for profile, pools in profiles.items():
        arch = profile[1]
        key = (profile[0] if profile in gpu_vars else "cpu") + ("" if arch == DEFAULT_ARCHITECTURE else f"-{arch}")
        if any(image.key == key for image in out):
            key = f"{key}-{pools[0]}"
        out.append(ImageDesign(key, tuple(pools), everything | gpu_vars.get(profile, {})
                               | {"slurm_dbd_host": BAKE_HOST, "monitoring_host": BAKE_HOST}, arch))
    return tuple(out)


def node_config(loaded: Loaded, plan: Plan, settings: StackSettings,
                cloud: Collection[str] | None = None) -> NodeConfig:
    """The images of the pools in `cloud` (None: every pool) and the boot-phase files (group vars, each pool's
    vars, the SLURM files), from the renderers `clusterforge render` uses; no file header (it names the
    blueprint's path, which is not the cluster). `settings`: the Pulumi project's directory (the blueprint's
    folder) and the parents of the other architectures."""
    ctx = RenderContext(loaded, plan, settings.blueprint.parent)
    everything = group_vars(ctx)
    files = {"inventory/group_vars/all.yml": dump_ansible(everything)}
    own = pool_vars(ctx)
    for pool in plan.nodes:
        group = pool_group(pool.pool)
        files[f"inventory/group_vars/{group}.yml"] = dump_ansible(pool_group_vars(pool, plan) | own.get(group, {}))
    files |= {name: text for name, text in render_files(ctx).items() if name.startswith(CONFIG_DIRS)}
    images = _images(ctx, everything, cloud)
    others = sorted({image.architecture for image in images} - {DEFAULT_ARCHITECTURE})
    parents = {arch: ParentImage(settings.parent_parameter(arch), settings.build_instance_type(arch))
               for arch in others}
    return NodeConfig(images, files, parents)


def bake_inventory() -> str:
    """The build instance in every SLURM group: it stands in for every host of the image."""
    children: dict[str, Any] = {group: {"hosts": {BAKE_HOST: {}}} for group in ROLE_GROUPS}
    return yaml.safe_dump({"all": {"children": children}}, sort_keys=False)


class _Literal(yaml.SafeDumper):
    """Multi-line strings as `|` blocks, so the document reads as the files and commands it holds."""


def _literal(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Literal.add_representer(str, _literal)


def install_commands() -> list[str]:
    """Python 3.11+ in a venv of its own (the system's may be older), ansible and boto3 pinned."""
    packages = " ".join(PYTHON_PACKAGES)
    return [
        "set -eu",
        "export DEBIAN_FRONTEND=noninteractive",
        "PY=$(command -v python3.12 || command -v python3.11 || true)",
        'if [ -z "$PY" ]; then apt-get update -q && apt-get install -y -q python3.11 python3.11-venv; '
        "PY=$(command -v python3.11); fi",
        '"$PY" -c "import ensurepip, venv" 2>/dev/null || '
        '{ apt-get update -q && apt-get install -y -q "$(basename "$PY")-venv"; }',
        f'"$PY" -m venv {VENV}',
        f"{VENV}/bin/pip install --no-cache-dir --quiet {packages}",
    ]


def vars_text(bake_vars: dict[str, Any]) -> str:
    """The build's group vars as the playbook reads them (every string from input `!unsafe` to Ansible)."""
    return dump_ansible(bake_vars)


def vars_key(image_key: str, text: str) -> str:
    """The S3 key of an image's build vars: named by their digest, so a change is a new object and a new bake."""
    return f"{VARS_PREFIX}{image_key}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yml"


def component_document(name: str, bundle_url: str, vars_url: str) -> str:
    """The Image Builder (AWSTOE) component: ansible in a venv, the roles bundle and the build's vars from S3,
    `ansible-playbook -c local site.yml --tags install`, then the identity of the build instance removed.

    No text from the blueprint is in it: AWSTOE resolves `{{ ... }}` in every step's inputs (its variables and
    the outputs of earlier steps), so a description or a name holding such text would be evaluated by the build
    (`!unsafe` stops only Ansible). The vars, which hold such text, are an S3 object the build downloads as
    bytes (`vars_url`); the document holds only what this module writes and the objects' names."""
    playbook = (f"cd {ANSIBLE_DIR} && ANSIBLE_CONFIG={ANSIBLE_DIR}/ansible.cfg {VENV}/bin/ansible-playbook -c local "
                f"-i {BAKE_DIR}/inventory/hosts.yml site.yml --tags install "
                f"-e slurm_dbd_host={BAKE_HOST} -e monitoring_host={BAKE_HOST}")
    document = {
        "name": name,
        "description": "clusterforge: the roles' install steps, baked once for every node of this image",
        "schemaVersion": 1.0,
        "phases": [{"name": "build", "steps": [
            {"name": "Ansible", "action": "ExecuteBash", "inputs": {"commands": install_commands()}},
            {"name": "RolesBundle", "action": "S3Download", "inputs": [
                {"source": bundle_url, "destination": f"{BASE}/roles.tar.gz", "overwrite": True},
                {"source": vars_url, "destination": f"{BAKE_DIR}/inventory/group_vars/all.yml", "overwrite": True}]},
            {"name": "Unpack", "action": "ExecuteBash", "inputs": {"commands": [
                "set -eu", f"rm -rf {ANSIBLE_DIR}", f"mkdir -p {ANSIBLE_DIR}",
                f"tar -xzf {BASE}/roles.tar.gz -C {ANSIBLE_DIR} --no-same-owner"]}},
            {"name": "BakeVars", "action": "CreateFile", "inputs": [
                {"path": f"{BAKE_DIR}/inventory/hosts.yml", "content": bake_inventory(), "overwrite": True}]},
            {"name": "Install", "action": "ExecuteBash", "inputs": {"commands": ["set -eu", playbook]}},
            {"name": "Identity", "action": "ExecuteBash", "inputs": {"commands": ["set -eu", *CLEANUP]}},
        ]}],
    }
    return yaml.dump(document, Dumper=_Literal, sort_keys=False, width=1000)


def bake_hash(document: str, parent_image: str) -> str:
    """12 hex digits over what the image is made from. The document holds the bundle's key (its digest), the
    vars with the pins, the build commands and the cleanup; the parent AMI is the rest."""
    digest = hashlib.sha256(document.encode())
    digest.update(b"\0" + parent_image.encode())
    return digest.hexdigest()[:12]
