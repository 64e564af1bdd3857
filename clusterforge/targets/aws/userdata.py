"""First-boot user data (cloud-init): the node's identity, and on a baked image the roles' boot phase.

Two modes. With a pinned `aws.ami` the user data holds the identity only (hostname, the controller's address,
an env file) and the Ansible roles are pushed later (`clusterforge provision`). On the image the stack bakes
(`bake.py`), it also holds a one-host inventory and the boot script: the node fetches the node config from S3
and the munge key from SSM with its instance role, and runs `site.yml --skip-tags install` on itself. Only the
identity travels in user data (EC2 caps it at 16 KB, and anyone who can describe the instance can read it):
no key, no vars.

It runs once, at first boot, so the stack ignores later changes to it instead of restarting nodes.

A pool slurmctld launches has one user data for all its nodes (its launch template's): the identity without a
node name, which the node learns from its instance tag first (`userdata_identify`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from clusterforge.targets.aws.userdata_boot import (
    BOOT_SCRIPT,
    IMDS_CONTROLLER,
    IMDS_ROOT_ONLY,
    INVENTORY_FILE,
    BootSource,
    boot_env,
    boot_script,
    node_inventory,
)
from clusterforge.targets.aws.userdata_identify import (
    IDENTIFY_SCRIPT,
    INVENTORY_TEMPLATE,
    NODE_PLACEHOLDER,
    TAG_WAIT_S,
    identify_script,
)

ENV_FILE = "/etc/clusterforge/node.env"


@dataclass(frozen=True)
class NodeIdentity:
    cluster: str
    node: str | None  # None: one user data for a pool's nodes, each learns its name at boot (userdata_identify)
    pool: str
    role: str
    controller: str
    controller_address: str | None  # None on the controller itself


def node_env(identity: NodeIdentity) -> dict[str, str]:
    env = {"CLUSTERFORGE_CLUSTER": identity.cluster}
    if identity.node is not None:
        env["CLUSTERFORGE_NODE"] = identity.node
    env |= {"CLUSTERFORGE_POOL": identity.pool, "CLUSTERFORGE_ROLE": identity.role,
            "SLURM_CONTROLLER": identity.controller}
    if identity.controller_address is not None:
        env["SLURM_CONTROLLER_ADDR"] = identity.controller_address
    return env


def _boot_files(identity: NodeIdentity, tag_wait_s: int) -> list[dict[str, str]]:
    """The one-host inventory (or, for a pool's nodes, its template and the script that fills it in) and the
    boot script."""
    executable = {"permissions": "0700", "owner": "root:root"}
    if identity.node is not None:
        inventory = node_inventory(identity.node, identity.pool, identity.role)
        files = [{"path": INVENTORY_FILE, "permissions": "0644", "owner": "root:root", "content": inventory}]
    else:
        template = node_inventory(NODE_PLACEHOLDER, identity.pool, identity.role)
        files = [{"path": INVENTORY_TEMPLATE, "permissions": "0644", "owner": "root:root", "content": template},
                 {"path": IDENTIFY_SCRIPT, **executable, "content": identify_script(tag_wait_s)}]
    return [*files, {"path": BOOT_SCRIPT, **executable, "content": boot_script()}]


def cloud_config(identity: NodeIdentity, boot: BootSource | None = None, tag_wait_s: int = TAG_WAIT_S) -> str:
    """A `#cloud-config` document: hostname, the controller in /etc/hosts, and an env file for the roles; with
    `boot`, also the node's one-host inventory, the metadata service closed to all but root, and the boot
    script run once (`userdata_boot`)."""
    env = "".join(f"{key}={value}\n" for key, value in (node_env(identity) | boot_env(boot)).items())
    named = {"hostname": identity.node, "fqdn": identity.node} if identity.node is not None else {}
    document: dict[str, Any] = named | {
        "preserve_hostname": False,
        "write_files": [{"path": ENV_FILE, "permissions": "0644", "owner": "root:root", "content": env}],
    }
    bootcmd: list[list[str]] = []
    if identity.controller_address is not None:
        line = f"{identity.controller_address} {identity.controller}"
        bootcmd.append(["sh", "-c", f"grep -qx '{line}' /etc/hosts || echo '{line}' >> /etc/hosts"])
    if boot is not None:
        bootcmd.append(["sh", "-c", IMDS_CONTROLLER if identity.role == "controller" else IMDS_ROOT_ONLY])
        document["write_files"] += _boot_files(identity, tag_wait_s)
        document["runcmd"] = ([[BOOT_SCRIPT]] if identity.node is not None
                              else [["sh", "-c", f"{IDENTIFY_SCRIPT} && {BOOT_SCRIPT}"]])
    elif identity.node is None:
        raise ValueError("a node that learns its name at boot needs the boot phase (the baked image)")
    if bootcmd:
        document["bootcmd"] = bootcmd
    return "#cloud-config\n" + yaml.safe_dump(document, sort_keys=False, width=1000)
