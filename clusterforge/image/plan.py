"""Which node images a blueprint needs, and the hash of each one's inputs.

One image per accelerator vendor among the blueprint's pools (a pool without GPUs is vendor `none`): a vendor's
pools share one image, except those that pin their own software (`software:` on the pool), which get one per
distinct override, as the AWS target's images split (targets/aws/bake.py). Each is baked on one node in every
SLURM role group (controller, compute, login: as the lab bakes) and in one pool group of that vendor, a compute
pool first, so that pool's vars apply.

The inputs hash (`NodeImage.inputs`) covers what the image is made of:

- the base: the node image's recipe (Debian suite, mmdebstrap packages, lab/data/Containerfile), not its bytes,
  so every machine with this checkout names the same image the same way and `--dry-run` needs no podman;
- the roles: site.yml, every role's install steps, defaults and vars, the filter plugins (lab/bake.py
  `role_inputs`), the clean-up and the boot phase's packages and files (lab/selfboot.py);
- whether the image is bootable (`--bootable`, the default): the kernel's packages and steps (image/bootable.py);
  a container image's hash leaves them out;
- the pins, and where packages come from: `lab` adds the lab repository's recipe (lab/repo.py), `vendor` the
  repository settings the render writes;
- the rendered settings that choose what is installed (all.yml's `*_enabled`, `*_kind`, `*_version` and
  `gpu_vendor`), and the representative pool's vars that the roles read (its GPU count and model, IMEX, its own
  pins; empty values count as unset).

Not inputs: the node count, node names and addresses, the controller's and monitoring host's names (the bake node
stands in for them), SLURM's and the health check's settings, secrets (the image has none: the munge key is given
at boot).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from clusterforge.accelerator_kernel import accelerator, default
from clusterforge.files.checkout import project_root
from clusterforge.image import bootable as boot
from clusterforge.lab import bake, image, repo
from clusterforge.lab.render import group_vars, inventory_groups
from clusterforge.plan.model import Plan, PoolNodes
from clusterforge.render.group_vars import pin_vars
from clusterforge.render.inventory import pool_group
from clusterforge.render.yamlout import load

NO_GPU = "none"
LAB_SOURCES = "lab"  # the lab's apt repository (a `--sources` word, not target lab)
SOURCES = (LAB_SOURCES, "vendor")
REPOSITORY_PREFIX = "localhost/clusterforge-node"
# all.yml's settings that choose what the install steps install (the rest configure what is installed)
CHOOSES = re.compile(r"(_enabled|_kind|_version)$|^gpu_vendor$")
# where the vendor sources' packages come from, when the render names it
WHERE_FROM = re.compile(r"_(apt_repository|apt_repository_filename|apt_key_url|url|sha256)$")


@cache
def lab_gaps() -> dict[str, Any]:
    """What a `lab` image leaves out: the GPU hosts' packages the lab's repository has no stand-in for (the GPU
    container toolkit, and what each vendor's stand-ins name as their gaps); nodes without GPUs, the lab's and CI's,
    cannot run them anyway."""
    gaps: dict[str, Any] = {"containers_gpu": False}
    for standins in repo.standins():
        gaps.update(standins.gaps)
    return gaps


@dataclass(frozen=True)
class NodeImage:
    """One image a blueprint needs: its vendor's pools, the pool group it is baked in and that pool's vars."""

    cluster: str
    vendor: str
    pools: tuple[str, ...]
    pool_group: str
    pool_vars: Mapping[str, Any]
    sources: str
    pins: object
    inputs: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    flavour: str = ""  # `<vendor>-<first pool>` for pools that pin their own software; "" for the vendor's image
    bootable: bool = True  # a kernel and its initramfs in it, for Warewulf (image/bootable.py)

    @property
    def name(self) -> str:
        return f"clusterforge-node-{_label(self.cluster)}-{_label(self.flavour or self.vendor)}"

    @property
    def repository(self) -> str:
        return f"localhost/{self.name}"

    @property
    def tag(self) -> str:
        return f"{self.repository}:{self.inputs}"

    @property
    def archive(self) -> str:
        """The OCI archive's file name (`--oci-archive`)."""
        return f"{self.name}-{self.inputs}.tar"


def _label(text: str) -> str:
    """A name as an image repository takes it: lowercase letters, digits and single dashes."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "-", text.lower())).strip("-") or "x"


def lab_serves(vendor: str) -> bool:
    """Whether the lab's repository has the stand-ins an image of this vendor installs: the default vendor's stack
    (lab/repo.py), and nothing vendor-specific for pools without GPUs."""
    return vendor in (NO_GPU, default().name)


def vendor_of(pool: PoolNodes) -> str:
    """A pool's accelerator vendor (the catalog's gpus.vendor, the default vendor where it names none), `none`
    without GPUs."""
    return accelerator(pool.gpu_vendor).name if pool.gpu_count else NO_GPU


@cache
def role_words() -> frozenset[str]:
    """Every variable-like word the install steps, the roles' gates (tasks/main.yml) and defaults mention."""
    root = project_root()
    files = [root / "site.yml", *root.glob("roles/*/tasks/main.yml"), *root.glob("roles/*/tasks/install.yml"),
             *root.glob("roles/*/tasks/packages.yml"), *root.glob("roles/*/defaults/main.yml")]
    return frozenset(word for path in files for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text()))


def _set(value: Any) -> bool:
    return value not in (None, "", 0, False, [], {})


def pool_inventory_vars(rendered: Path) -> dict[str, dict[str, Any]]:
    """Each pool group's vars from the rendered hosts.yml (GPU count and model, GRES, NICs, the target's)."""
    data = load((rendered / "inventory/hosts.yml").read_text()) or {}
    found: dict[str, dict[str, Any]] = {}

    def walk(body: Any) -> None:
        for child, child_body in ((body or {}).get("children") or {}).items():
            if child_body and child_body.get("vars"):
                found.setdefault(child, {}).update(child_body["vars"])
            walk(child_body)

    walk(data.get("all"))
    inventory_groups(data)  # the same file the lab reads: fails the same way on a malformed one
    return found


def pool_vars(rendered: Path, group: str) -> dict[str, Any]:
    """The representative pool's vars that the roles read and that are set: its inventory vars, then its own
    group_vars file (pins, vendor), which win as in Ansible."""
    merged = dict(pool_inventory_vars(rendered).get(group, {}))
    own = rendered / "inventory/group_vars" / f"{group}.yml"
    if own.is_file():
        merged |= load(own.read_text()) or {}
    words = role_words()
    return {key: value for key, value in sorted(merged.items()) if key in words and _set(value)}


def lab_pins(settings: Mapping[str, Any], own: Mapping[str, Any]) -> repo.Pins:
    """The lab repository's pins for one image: the render's, the pool's own pins over them; the Lustre client's
    is the role's default where the blueprint has none (as `lab up` serves it)."""
    from clusterforge.lab.cluster import role_default

    merged = {**settings, **own}
    lustre = merged.get("lustre_client_version") or role_default("lustre_client", "lustre_client_version")
    return repo.Pins(lustre_client=str(lustre), others=repo.other_pins(merged))


def base_recipe() -> bytes:
    """What the node image is built from: the suite, mmdebstrap's packages and the Containerfile."""
    return (f"{image.SUITE}\0{','.join(image.PACKAGES)}\0".encode() + image.containerfile().read_bytes())


def inputs_hash(pins: object, sources: str, settings: Mapping[str, Any], own: Mapping[str, Any],
                bootable: bool = True) -> str:
    digest = hashlib.sha256(b"clusterforge node image\0" + base_recipe())
    bake.add_recipe(digest, pins)
    if bootable:  # left out otherwise: a container image keeps the name it had before images were bootable
        digest.update(b"\0bootable\0" + boot.recipe())
    digest.update(f"\0sources={sources}\0".encode())
    if sources == LAB_SOURCES:
        digest.update(repo.recipe() + json.dumps(lab_gaps(), sort_keys=True).encode())
    digest.update(json.dumps({"settings": settings, "pool": own}, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:12]


def own_software(rendered: Path, pool: PoolNodes) -> str:
    """A pool's own software (its group_vars file: pins of its `software:` override, its vendor in a cluster of
    several), as text to compare; "" when it has none."""
    own = rendered / "inventory/group_vars" / f"{pool_group(pool.pool)}.yml"
    return json.dumps(load(own.read_text()) or {}, sort_keys=True, default=str) if own.is_file() else ""


def images(plan: Plan, rendered: Path, sources: str, bootable: bool = True) -> list[NodeImage]:
    """The images the rendered blueprint needs, in the order their pools come: one per vendor, and one more for
    each set of pools of that vendor that pin their own software (named `<vendor>-<first pool>`); each with a
    kernel for Warewulf when `bootable`."""
    all_vars = group_vars(rendered)
    cluster = str(all_vars["clusterforge_cluster"])
    chosen = {key: value for key, value in all_vars.items()
              if CHOOSES.search(key) or (sources == "vendor" and WHERE_FROM.search(key))}
    groups: dict[tuple[str, str], list[PoolNodes]] = {}
    for pool in plan.nodes:
        groups.setdefault((vendor_of(pool), own_software(rendered, pool)), []).append(pool)
    out = []
    for (vendor, software), pools in groups.items():
        representative = next((p for p in pools if p.role == "compute"), pools[0])
        group = pool_group(representative.pool)
        own = pool_vars(rendered, group)
        pins: object
        if sources == LAB_SOURCES:
            pins = lab_pins(all_vars, own)
        else:
            pins = {var: own.get(var, all_vars.get(var)) for var in sorted(set(pin_vars().values()))}
        out.append(NodeImage(cluster, vendor, tuple(p.pool for p in pools), group, own, sources, pins,
                             inputs_hash(pins, sources, chosen, own, bootable), chosen,
                             f"{vendor}-{pools[0].pool}" if software else "", bootable))
    return out
