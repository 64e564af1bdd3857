"""The stack program: a checked blueprint in, components composed, the inventory's outputs out."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from clusterforge.blueprint.load import Loaded
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.plan import Plan
from clusterforge.targets.aws.bake import NodeConfig, check_route, cluster_plan, node_config
from clusterforge.targets.aws.components.cloud_pools import CloudPools
from clusterforge.targets.aws.components.compute import Compute, ComputeArgs
from clusterforge.targets.aws.components.network import Network, NetworkArgs
from clusterforge.targets.aws.components.storage import Storage, StorageArgs
from clusterforge.targets.aws.design import ClusterDesign, design
from clusterforge.targets.aws.outputs import OUTPUTS_VERSION
from clusterforge.targets.aws.settings import STACK_CONFIG, StackSettings


@dataclass(frozen=True)
class Built:
    design: ClusterDesign
    network: Network
    storage: Storage
    compute: Compute | CloudPools  # CloudPools: a hybrid's cloud pools, its controller on premises
    outputs: dict[str, Any]  # what `pulumi stack output --json` shows; read back by clusterforge.targets.aws.inventory


def provider(plan: ClusterDesign) -> aws.Provider:
    """The region comes from the blueprint, not from `aws:region`, so the two can never disagree."""
    return aws.Provider("aws", region=plan.region, default_tags=aws.ProviderDefaultTagsArgs(tags=plan.tags()))


def controller(plan: ClusterDesign, compute: Compute | CloudPools, address: str | None) -> dict[str, Any]:
    """The controller the stack built, or a hybrid's on-prem one: its name as the plan has it, the address the
    stack config gives (none: the nodes resolve its name) and the IAM user its power-save programs call as."""
    if isinstance(compute, CloudPools):
        return {"name": plan.controller, "private_ip": address, "on_premises": True,
                "iam_user": compute.controller_user.user_name, "boot_bucket": compute.boot_bucket}
    return {"name": compute.controller.name, "private_ip": compute.controller.instance.private_ip}


def outputs(plan: ClusterDesign, storage: Storage, compute: Compute | CloudPools,
            address: str | None = None) -> dict[str, Any]:
    nodes = [{"name": n.name, "pool": n.pool.name, "role": n.pool.role, "instance_type": n.pool.instance_type,
              "instance_id": n.instance.id, "private_ip": n.instance.private_ip} for n in compute.nodes]
    templates = [{"pool": t.pool.name, "name": t.template.name, "launch_template_id": t.template.id,
                  "instance_type": t.pool.instance_type, "nodes": len(t.pool.nodes)}
                 for t in compute.pools if t.pool.launched_by_slurm]
    out: dict[str, Any] = {
        "outputs_version": OUTPUTS_VERSION, "cluster": plan.name, "region": plan.region,
        "availability_zones": list(plan.zones), "ami": compute.image_id, "nodes": nodes,
        "launch_templates": templates, "controller": controller(plan, compute, address),
        "checkpoint_bucket": storage.checkpoints.bucket,
    }
    if plan.hybrid:
        out["onprem_pools"] = list(plan.onprem_pools)
    lustre = storage.lustre
    if lustre is not None and plan.lustre is not None:
        out["lustre"] = {"file_system_id": lustre.file_system_id, "dns_name": lustre.dns_name,
                         "mount_name": lustre.mount_name, "mount": plan.lustre.mount,
                         "data_path": lustre.data_path, "checkpoint_path": lustre.checkpoint_path}
    return out


def baked(loaded: Loaded, settings: StackSettings, plan: ClusterDesign, planned: Plan | None) -> NodeConfig | None:
    """What the node image bakes and the nodes read at boot; None where the blueprint pins `aws.ami`. Refuses a
    bake without a route to its packages (`bake.check_route`)."""
    if plan.ami is not None:
        return None
    check_route(settings)
    return node_config(loaded, cluster_plan(loaded, settings, planned), settings, {p.name for p in plan.pools})


def controller_address(plan: ClusterDesign, settings: StackSettings) -> str | None:
    """`controllerAddress`, for a hybrid only, as a plain IP address (it goes into every cloud node's /etc/hosts)."""
    address = settings.controller_address
    if address is None:
        return None
    if not plan.hybrid:
        raise ClusterforgeError(Problem("controllerAddress is for a hybrid blueprint (its controller on premises)",
                                        STACK_CONFIG, path="controllerAddress",
                                        hint="remove it: this stack builds the controller"))
    try:
        canonical = str(ipaddress.ip_address(address)) == address
    except ValueError:
        canonical = False
    if not canonical:
        raise ClusterforgeError(Problem(f"controllerAddress {address!r} is not an IP address", STACK_CONFIG,
                                        path="controllerAddress",
                                        hint="the on-prem controller's address as the cloud nodes reach it, "
                                             "e.g. 10.1.0.5"))
    return address


def build(loaded: Loaded, settings: StackSettings, planned: Plan | None = None) -> Built:
    """Every resource of the cluster (of a hybrid: its cloud pools, `CloudPools`). The caller has already run the
    policies (`guard.check`), whose plan it passes as `planned`."""
    plan = design(loaded, settings, planned)
    address = controller_address(plan, settings)
    config = baked(loaded, settings, plan, planned)  # refuses before any resource is declared
    opts = pulumi.ResourceOptions(providers=[provider(plan)])
    network = Network("network", NetworkArgs(plan.name, plan.region, plan.addressing, settings.nat_gateway,
                                             tuple(plan.security.ingress)), opts)
    storage = Storage("storage", StorageArgs(plan, network.subnet_ids[plan.lustre_zone],
                                             network.lustre_security_group_id, settings.kms_key_arn,
                                             settings.protect_data), opts)
    args = ComputeArgs(plan, network.subnet_ids, network.cluster_security_group_id, settings.ami_parameter,
                       storage.checkpoints.bucket, settings.kms_key_arn, config,
                       settings.image_instance_type, settings.nat_gateway)
    compute = CloudPools("compute", args, address, opts) if plan.hybrid else Compute("compute", args, opts)
    return Built(plan, network, storage, compute, outputs(plan, storage, compute, address))
