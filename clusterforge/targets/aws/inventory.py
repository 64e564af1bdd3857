"""Ansible inventory from the stack's outputs: the nodes the stack made, at the addresses AWS gave them.

Group names match the planner's inventory (`slurm_controller`, `slurm_compute`, `slurm_login`,
`pool_<name>`), so the same roles and playbooks run against cloud and bare-metal clusters. `overlay` adds
the stack's addresses to an inventory the renderer wrote from the blueprint; `inventory` builds one from
the outputs alone.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.core.validation import validate
from clusterforge.files.yamlsource import Source, parse_text, read_text
from clusterforge.targets.aws.outputs import OUTPUTS_VERSION, NodeOutput, StackOutputs

SSM = "community.aws.aws_ssm"
ROLE_GROUPS = {"compute": "slurm_compute", "login": "slurm_login"}


def pool_group(pool: str) -> str:
    """Ansible group names take no dashes."""
    return "pool_" + pool.replace("-", "_")


def _ip(value: str) -> bool:
    """A plain IPv4 or IPv6 address written as AWS writes it: canonical, so no zone id (`fe80::1%eth0`, whose
    zone may hold any text), no scope, no spaces and no leading zeros."""
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    return str(address) == value and "%" not in value


def _pattern(regex: str) -> Callable[[str], bool]:
    compiled = re.compile(regex)
    return lambda value: compiled.fullmatch(value) is not None


_DNS_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_PATH = r"(/[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}){1,16}"
# The outputs are untrusted (a stack file from a pull request, or a stack someone else changed): every string
# they hand to the inventory has the form AWS gives it, by field name -> (check, the form in words).
_FORMS: dict[str, tuple[Callable[[str], bool], str]] = {
    "cluster": (_pattern(r"[a-z][a-z0-9-]{0,39}"), "a cluster name (lowercase letters, digits, '-')"),
    "name": (_pattern(r"[a-z0-9][a-z0-9-]{0,62}"), "a host name (lowercase letters, digits, '-')"),
    "pool": (_pattern(r"[a-z][a-z0-9-]{0,39}"), "a pool name (lowercase letters, digits, '-')"),
    "role": (_pattern(r"compute|login|controller|storage"), "compute, login, controller or storage"),
    "region": (_pattern(r"[a-z]{2}(-[a-z]+)+-[0-9]"), "an AWS region such as us-east-1"),
    "instance_type": (_pattern(r"[a-z0-9][a-z0-9-]{0,30}\.[a-z0-9-]{1,30}"), "an instance type such as p5.48xlarge"),
    "instance_id": (_pattern(r"i-[0-9a-f]{8,17}"), "an instance id i-<8 to 17 hex digits>"),
    "launch_template_id": (_pattern(r"lt-[0-9a-f]{8,17}"), "a launch template id lt-<8 to 17 hex digits>"),
    "private_ip": (_ip, "an IP address (plain IPv4 or IPv6, in canonical form)"),
    "file_system_id": (_pattern(r"[A-Za-z0-9][A-Za-z0-9-]{0,62}"), "an FSx file system id such as fs-0123abcd"),
    "dns_name": (lambda v: len(v) <= 253 and re.fullmatch(rf"{_DNS_LABEL}(\.{_DNS_LABEL})+", v) is not None,
                 "a DNS name"),
    "mount_name": (_pattern(r"[A-Za-z0-9_]{1,32}"), "an FSx mount name (letters, digits, '_')"),
    "mount": (_pattern(_PATH), "an absolute path without '.' or '..' components"),
    "data_path": (_pattern(_PATH), "an absolute path without '.' or '..' components"),
    "checkpoint_path": (_pattern(_PATH), "an absolute path without '.' or '..' components"),
    "checkpoint_bucket": (_pattern(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"), "an S3 bucket name"),
    "onprem_pools": (_pattern(r"[a-z][a-z0-9-]{0,39}"), "a pool name (lowercase letters, digits, '-')"),
    "iam_user": (_pattern(r"[A-Za-z0-9+=,.@_-]{1,64}"), "an IAM user name"),
    "boot_bucket": (_pattern(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"), "an S3 bucket name"),
}


def _strings(data: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string of the validated outputs with its path (the same path as in the file)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _strings(value, (*path, index))
    elif isinstance(data, str):
        yield path, data


def form_problems(outputs: StackOutputs, source: Source) -> list[Problem]:
    """Each string of the outputs that does not have its field's form, located in the outputs file."""
    problems = []
    for path, value in _strings(outputs.model_dump()):
        field = next((part for part in reversed(path) if isinstance(part, str)), "")
        check, form = _FORMS.get(str(field), (None, ""))
        if check is None:
            problems.append(source.problem(path, "is not a value clusterforge reads from stack outputs"))
        elif not check(value):
            problems.append(source.problem(path, f"{shown(value)} is not {form}",
                                           hint="export the outputs with pulumi stack output --json"))
    return problems


def parse_outputs(text: str, file: str = "<stack outputs>") -> StackOutputs:
    """`pulumi stack output --json` (JSON is YAML, so problems come back with their line); every value checked
    for its form, because the outputs reach the inventory (`ansible_host`) and the hosts' configuration."""
    source = parse_text(text, file)
    outputs = validate(StackOutputs, source)
    if outputs.outputs_version > OUTPUTS_VERSION:
        raise ClusterforgeError(Problem(f"stack outputs version {outputs.outputs_version} is newer than this "
                                        f"clusterforge reads ({OUTPUTS_VERSION})", file, hint="upgrade clusterforge"))
    problems = form_problems(outputs, source)
    if problems:
        raise ClusterforgeError(problems)
    return outputs


def read_outputs(path: Path) -> StackOutputs:
    return parse_outputs(read_text(path), str(path))


def read_stream(stream: BinaryIO, file: str = "<stdin>") -> StackOutputs:
    """Outputs piped in: read at most one byte past limits.INPUT_BYTES, so an endless pipe is refused early."""
    limit = limits.INPUT_BYTES.value
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ClusterforgeError(limits.INPUT_BYTES.problem(f"more than {limit:,}", file))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClusterforgeError(Problem(f"is not UTF-8 (byte {exc.start:,})", file)) from None
    return parse_outputs(text, file)


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
                           "slurm_controller_host": outputs.controller.name}
    if outputs.controller.private_ip is not None:  # a hybrid's on-prem controller may have none in the outputs
        out["slurm_controller_addr"] = outputs.controller.private_ip
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
    """A complete inventory from the outputs alone (pool facts the plan adds are not there). A pool slurmctld
    launches keeps its group with no host, as the render's (`power_saved: true`); a hybrid's on-prem pools are
    not in the outputs: render with `--from-outputs` for an inventory of the whole cluster."""
    children: dict[str, Any] = {"slurm_controller": {"hosts": {outputs.controller.name: {}}}}
    pools: dict[str, dict[str, Any]] = {}
    for node in outputs.nodes:
        group = pools.setdefault(pool_group(node.pool), {
            "vars": {"pool": node.pool, "role": node.role, "instance_type": node.instance_type}, "hosts": {}})
        group["hosts"][node.name] = host_vars(node, connection)
        role_group = ROLE_GROUPS.get(node.role)
        if role_group is not None:
            children.setdefault(role_group, {"children": {}})["children"][pool_group(node.pool)] = {}
    for template in outputs.launch_templates:
        pools.setdefault(pool_group(template.pool), {"vars": {
            "pool": template.pool, "role": "compute", "instance_type": template.instance_type,
            "power_saved": True}, "hosts": {}})
        children.setdefault("slurm_compute", {"children": {}})["children"][pool_group(template.pool)] = {}
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


def _onprem_hosts(groups: dict[str, Any], pools: list[str]) -> set[str]:
    """The hosts of a hybrid's on-prem pools in the render's inventory: the stack knows nothing of them."""
    return {name for pool in pools for name in (groups.get(pool_group(pool), {}).get("hosts") or {})}


def overlay(rendered: dict[str, Any], outputs: StackOutputs, connection: str = "ssh") -> dict[str, Any]:
    """The renderer's inventory (from the blueprint) with each host's stack address and the stack's facts.

    The stack's controller replaces the planner's (a blueprint without a controller pool gets one of its own
    on AWS); a hybrid's on-prem controller and on-prem hosts stay as the render wrote them. Refuses when the two
    disagree on any other node: the stack was built from another blueprint.
    """
    by_name = {n.name: n for n in outputs.nodes}
    groups = rendered.setdefault("all", {}).setdefault("children", {})
    local = _onprem_hosts(groups, outputs.onprem_pools)
    onprem_controller = outputs.controller.on_premises
    if not onprem_controller:
        groups["slurm_controller"] = {"hosts": {}}  # the planner's choice gives way to the stack's
    seen: set[str] = set()
    for hosts in _hosts(rendered):
        for name in hosts:
            if name in local:
                continue
            node = by_name.get(name)
            if node is None:
                raise ClusterforgeError(Problem(f"host {name} is in the blueprint but not in the stack outputs",
                                                hint="run pulumi up for this blueprint, then export the outputs"))
            hosts[name] = {**(hosts[name] or {}), **host_vars(node, connection)}
            seen.add(name)
    extra = [n for n in outputs.nodes if n.name not in seen]
    strangers = sorted(n.name for n in extra if n.role != "controller" or onprem_controller)
    if strangers:
        raise ClusterforgeError(Problem(f"the stack has nodes the blueprint does not: {', '.join(strangers)}",
                                        hint="render from the blueprint the stack was built from"))
    for node in extra:
        group = groups.setdefault(pool_group(node.pool), {
            "vars": {"pool": node.pool, "role": node.role, "instance_type": node.instance_type}, "hosts": {}})
        group["hosts"][node.name] = host_vars(node, connection)
    if not onprem_controller:
        controller = by_name.get(outputs.controller.name)
        groups["slurm_controller"]["hosts"][outputs.controller.name] = (
            host_vars(controller, connection) if controller else {})
    top = rendered["all"]
    top["vars"] = {**top.get("vars", {}), **cluster_vars(outputs, connection)}
    return rendered
