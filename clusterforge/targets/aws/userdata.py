"""First-boot user data (cloud-init): the node's hostname and where its SLURM controller is.

It runs once, at first boot; the Ansible roles own the node's configuration after that (munge key,
slurm.conf, Lustre mount), so the stack ignores later changes to it instead of restarting nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

ENV_FILE = "/etc/clusterforge/node.env"


@dataclass(frozen=True)
class NodeIdentity:
    cluster: str
    node: str
    pool: str
    role: str
    controller: str
    controller_address: str | None  # None on the controller itself


def node_env(identity: NodeIdentity) -> dict[str, str]:
    env = {"CLUSTERFORGE_CLUSTER": identity.cluster, "CLUSTERFORGE_NODE": identity.node,
           "CLUSTERFORGE_POOL": identity.pool, "CLUSTERFORGE_ROLE": identity.role,
           "SLURM_CONTROLLER": identity.controller}
    if identity.controller_address is not None:
        env["SLURM_CONTROLLER_ADDR"] = identity.controller_address
    return env


def cloud_config(identity: NodeIdentity) -> str:
    """A `#cloud-config` document: hostname, the controller in /etc/hosts, and an env file for the roles."""
    env = "".join(f"{key}={value}\n" for key, value in node_env(identity).items())
    document: dict[str, Any] = {
        "hostname": identity.node,
        "fqdn": identity.node,
        "preserve_hostname": False,
        "write_files": [{"path": ENV_FILE, "permissions": "0644", "owner": "root:root", "content": env}],
    }
    if identity.controller_address is not None:
        line = f"{identity.controller_address} {identity.controller}"
        document["bootcmd"] = [["sh", "-c", f"grep -qx '{line}' /etc/hosts || echo '{line}' >> /etc/hosts"]]
    return "#cloud-config\n" + yaml.safe_dump(document, sort_keys=False, width=1000)
