"""Ansible inventory from the stack's outputs: the nodes the stack made, at the addresses AWS gave them.

Group names match the planner's inventory (`slurm_controller`, `slurm_compute`, `slurm_login`,
`pool_<name>`), so the same roles and playbooks run against cloud and bare-metal clusters. `overlay` adds
the stack's addresses to an inventory the renderer wrote from the blueprint; `inventory` builds one from
the outputs alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clusterforge.aws.outputs import OUTPUTS_VERSION, NodeOutput, StackOutputs
from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.validation import validate
from clusterforge.yamlsource import parse_text, read_text

SSM = "community.aws.aws_ssm"
ROLE_GROUPS = {"compute": "slurm_compute", "login": "slurm_login"}


def pool_group(pool: str) -> str:
    """Ansible group names take no dashes."""
    return "pool_" + pool.replace("-", "_")


def parse_outputs(text: str, file: str = "<stack outputs>") -> StackOutputs:
    """`pulumi stack output --json` (JSON is YAML, so problems come back with their line)."""
    outputs = validate(StackOutputs, parse_text(text, file))
    if outputs.outputs_version > OUTPUTS_VERSION:
        raise ClusterforgeError(Problem(f"stack outputs version {outputs.outputs_version} is newer than this "
                                        f"clusterforge reads ({OUTPUTS_VERSION})", file, hint="upgrade clusterforge"))
    return outputs


def read_outputs(path: Path) -> StackOutputs:
    return parse_outputs(read_text(path), str(path))


def host_vars(node: NodeOutput, connection: str) -> dict[str, Any]:
    """How Ansible reaches a node: its private IP (SSH from inside the VPC) or its instance id (SSM)."""
    out: dict[str, Any] = {"ansible_host": node.private_ip, "aws_instance_id": node.instance_id,
                           "aws_instance_type": node.instance_type}
    if connection == "ssm":
        out["ansible_aws_ssm_instance_id"] = node.instance_id
    return out


def cluster_vars(outputs: StackOutputs, connection: str) -> dict[str, Any]:
    """Facts only the stack knows: the controller's address and where FSx is."""
    out: dict[str, Any] = {"clusterforge_cluster": outputs.cluster, "aws_region": outputs.region,
                           "slurm_controller_host": outputs.controller.name,
                           "slurm_controller_addr": outputs.controller.private_ip}
    if outputs.lustre is not None:
        fsx = outputs.lustre
        out |= {"lustre_client_enabled": True, "lustre_client_kind": "fsx", "lustre_client_mount": fsx.mount,
                "lustre_client_fsx_dns_name": fsx.dns_name, "lustre_client_fsx_mount_name": fsx.mount_name,
                "lustre_client_fsx_file_system_id": fsx.file_system_id}
    if outputs.checkpoint_bucket is not None:
        out["clusterforge_checkpoint_bucket"] = outputs.checkpoint_bucket
    if connection == "ssm":
        out |= {"ansible_connection": SSM, "ansible_aws_ssm_region": outputs.region}
        if outputs.checkpoint_bucket is not None:
            out["ansible_aws_ssm_bucket_name"] = outputs.checkpoint_bucket  # the plugin stages files in S3
    return out


def inventory(outputs: StackOutputs, connection: str = "ssh") -> dict[str, Any]:
    """A complete inventory from the outputs alone (pool facts the plan adds are not there)."""
    children: dict[str, Any] = {"slurm_controller": {"hosts": {outputs.controller.name: {}}}}
    pools: dict[str, dict[str, Any]] = {}
    for node in outputs.nodes:
        group = pools.setdefault(pool_group(node.pool), {
            "vars": {"pool": node.pool, "role": node.role, "instance_type": node.instance_type}, "hosts": {}})
        group["hosts"][node.name] = host_vars(node, connection)
        role_group = ROLE_GROUPS.get(node.role)
        if role_group is not None:
            children.setdefault(role_group, {"children": {}})["children"][pool_group(node.pool)] = {}
    return {"all": {"vars": cluster_vars(outputs, connection), "children": children | pools}}


def _hosts(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """Every `hosts` mapping in an inventory tree."""
    found: list[dict[str, Any]] = []
    for key, value in tree.items():
        if isinstance(value, dict):
            if key == "hosts":
                found.append(value)
            else:
                found += _hosts(value)
    return found


def overlay(rendered: dict[str, Any], outputs: StackOutputs, connection: str = "ssh") -> dict[str, Any]:
    """The renderer's inventory (from the blueprint) with each host's stack address and the stack's facts.

    The stack's controller replaces the planner's (a blueprint without a controller pool gets one of its own
    on AWS). Refuses when the two disagree on any other node: the stack was built from another blueprint.
    """
    by_name = {n.name: n for n in outputs.nodes}
    groups = rendered.setdefault("all", {}).setdefault("children", {})
    groups["slurm_controller"] = {"hosts": {}}  # the planner's choice gives way to the stack's
    seen: set[str] = set()
    for hosts in _hosts(rendered):
        for name in hosts:
            node = by_name.get(name)
            if node is None:
                raise ClusterforgeError(Problem(f"host {name} is in the blueprint but not in the stack outputs",
                                                hint="run pulumi up for this blueprint, then export the outputs"))
            hosts[name] = {**(hosts[name] or {}), **host_vars(node, connection)}
            seen.add(name)
    extra = [n for n in outputs.nodes if n.name not in seen]
    strangers = sorted(n.name for n in extra if n.role != "controller")
    if strangers:
        raise ClusterforgeError(Problem(f"the stack has nodes the blueprint does not: {', '.join(strangers)}",
                                        hint="render from the blueprint the stack was built from"))
    for node in extra:
        group = groups.setdefault(pool_group(node.pool), {
            "vars": {"pool": node.pool, "role": node.role, "instance_type": node.instance_type}, "hosts": {}})
        group["hosts"][node.name] = host_vars(node, connection)
    controller = by_name.get(outputs.controller.name)
    groups["slurm_controller"]["hosts"][outputs.controller.name] = (
        host_vars(controller, connection) if controller else {})
    top = rendered["all"]
    top["vars"] = {**top.get("vars", {}), **cluster_vars(outputs, connection)}
    return rendered
