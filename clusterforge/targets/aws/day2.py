"""What a change to target aws's own rendered keys takes on day two: the region in all.yml, the pools' placement,
the facts a deployed stack adds to hosts.yml (each with what it is), the keys of the Pulumi stack config, and what
the stack builds (pulumi/resources.yaml: FSx, each pool's template or instances), classed by data/cloud-changes.yaml
with the provider's own words. `clusterforge.render.change_classes` asks every target for its table; nothing there
names AWS."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clusterforge.render.change_classes import Action, Effect, TargetEffects

if TYPE_CHECKING:
    from clusterforge.render.manifest import Classed

_HOW = "how Ansible reaches the hosts (the SSM connection plugin)"
_STACK = "the stack's {}: its groups carry what applies to it, and a change is treated as needing it idle"

# Cluster-wide: all.yml's region, and what a deployed stack adds to hosts.yml's `all` vars
GROUP_VARS: dict[str, tuple[Effect, ...]] = {
    "aws_region": (Effect(Action.REIMAGE, "all", "another region: every instance is replaced"),),
    "slurm_controller_addr": (Effect(Action.RESTART, "compute", "slurmd finds the controller at this address (and "
                                     "a configless slurmd fetches its config from it) when it starts", "slurmd"),),
    "lustre_client_fsx_file_system_id": (Effect(
        Action.REBOOT, "all", "another FSx file system: the Lustre client's kernel modules and mount, which jobs "
        "read and write through"),),
    "clusterforge_checkpoint_bucket": (Effect(Action.NONE, "none", "read by jobs when they start"),),
    **{key: (Effect(Action.NONE, "none", _HOW),)
       for key in ("ansible_aws_ssm_region", "ansible_aws_ssm_bucket_name", "ansible_aws_ssm_instance_id")},
}

# Per host or per pool in hosts.yml: where the render placed a pool, and what the stack reports of each node
HOST_VARS: dict[str, Effect] = {
    "placement_group": Effect(Action.REIMAGE, "changed", "an instance changes placement group only by being replaced"),
    "availability_zone": Effect(Action.REIMAGE, "changed", "an instance changes zone only by being replaced"),
    "aws_instance_id": Effect(Action.REIMAGE, "changed", "another instance: it is provisioned from the start"),
    "aws_instance_type": Effect(Action.REIMAGE, "changed", "other hardware: the node is replaced"),
    "instance_type": Effect(Action.REIMAGE, "changed", "other hardware: the node is replaced"),
    "pool": Effect(Action.DRAIN, "changed", _STACK.format("pool")),
    "role": Effect(Action.DRAIN, "changed", _STACK.format("role")),
    **{key: Effect(Action.NONE, "changed", "how Ansible reaches the host (the SSM connection plugin)")
       for key in ("ansible_aws_ssm_instance_id", "ansible_aws_ssm_region", "ansible_aws_ssm_bucket_name")},
}

# The keys above that no role reads: facts for people and operators' own playbooks (docs/aws.md). The region,
# zone and placement group are read by the monitoring role (Prometheus's labels), which declares them.
DESCRIPTIONS: dict[str, str] = {
    "slurm_controller_addr": "the controller's private address",
    "lustre_client_fsx_file_system_id": "the FSx file system's id",
    "clusterforge_checkpoint_bucket": "the S3 bucket for checkpoints",
    "ansible_aws_ssm_region": "the region of the SSM connection plugin",
    "ansible_aws_ssm_bucket_name": "the S3 bucket the SSM connection plugin stages files in",
    "aws_instance_id": "the host's EC2 instance id",
    "aws_instance_type": "the host's EC2 instance type",
    "instance_type": "the instance type of a node only the stack knows",
    "pool": "the pool of a node only the stack knows (the controller AWS adds)",
    "role": "the SLURM role of a node only the stack knows",
    "ansible_aws_ssm_instance_id": "the instance the SSM connection plugin reaches the host through",
}

# What a deployed AWS stack adds to hosts.yml (`render --from-outputs`; inventory.py host_vars and cluster_vars):
# facts, not settings. Compared only when both renders have them: a render without the stack's outputs says
# nothing about addresses, instance ids or where FSx is.
STACK_FACTS = frozenset({
    "ansible_host", "aws_instance_id", "aws_instance_type", "ansible_aws_ssm_instance_id",
    "slurm_controller_addr", "lustre_client_fsx_dns_name", "lustre_client_fsx_mount_name",
    "lustre_client_fsx_file_system_id", "clusterforge_checkpoint_bucket", "ansible_connection",
    "ansible_aws_ssm_region", "ansible_aws_ssm_bucket_name"})

# pulumi/Pulumi.<cluster>.yaml, by the part of a config key after its namespace: the keys stacks/aws/__main__.py
# reads (docs/aws.md, "Stack config"). What the stack builds from the blueprint is pulumi/resources.yaml's.
PULUMI_IGNORED = frozenset({"blueprint"})  # where the stack reads the blueprint: a path, not a setting
_GATE = Effect(Action.NONE, "none", "the policy gate's input: `pulumi preview` and `up` refuse a design it fails")
_IMAGE = Effect(Action.REIMAGE, "all", "the node image is baked again from it: running nodes keep the image they "
                "were launched with until each is launched again (a rolling replacement)")
PULUMI_KEYS: dict[str, Effect] = {
    "region": Effect(Action.NONE, "none", "the program takes the region from the blueprint (aws.region), not "
                     "from aws:region"),
    "catalogs": _GATE, "policyconfig": _GATE, "waivers": _GATE,
    "natgateway": Effect(Action.NONE, "none", "`pulumi up` adds or removes the NAT gateway and the private "
                         "subnets' route to it: the nodes' outbound traffic moves, running jobs go on"),
    "packagemirror": Effect(Action.NONE, "none", "where the image build fetches packages"),
    "protectdata": Effect(Action.NONE, "none", "Pulumi's protect flag on FSx and the checkpoint bucket"),
    "imageinstancetype": Effect(Action.NONE, "none", "the instance the node image is baked on"),
    "imageinstancetypearm64": Effect(Action.NONE, "none", "the instance the arm64 node image is baked on"),
    "amiparameter": _IMAGE, "amiparameterarm64": _IMAGE,
    "controllerinstancetype": Effect(Action.REIMAGE, "controllers", "the controller's instance ignores changes "
                                     "to its launch template: replace it with `pulumi up --replace`"),
    "controlleraddress": Effect(Action.REIMAGE, "compute", "cloud nodes read the on-prem controller's address "
                                "from their user data at first boot: running ones keep the old one until each is "
                                "launched again"),
    "kmskeyarn": Effect(Action.LOSE_DATA, "all", "FSx for Lustre's KMS key is set at creation: another one "
                        "replaces the file system with an empty one, and every byte on it is lost "
                        "(terraform-provider-aws, internal/service/fsx/lustre_file_system.go: "
                        "\"names.AttrKMSKeyID: { Type: schema.TypeString, Optional: true, Computed: true, "
                        "ForceNew: true,\")"),
}
PULUMI_OTHER = Effect(Action.NONE, "none", "the stack reads no such key")


def stack_config_effect(key: str) -> Effect | None:
    """A stack config key's entry (`clusterforge-aws:controllerInstanceType`), or None for a key that is not a
    setting."""
    name = key.rpartition(":")[2].lower()
    if name in PULUMI_IGNORED:
        return None
    return PULUMI_KEYS.get(name, PULUMI_OTHER)


def stack_config_entries(text: str) -> dict[str, Any]:
    """The settings of a rendered stack config: its `config:` mapping."""
    from clusterforge.render.yamlout import load

    data = load(text) if text else None
    config = data.get("config") if isinstance(data, dict) else None
    return config if isinstance(config, dict) else {}


def resource_classes(text: str) -> Mapping[str, Classed]:
    """What changing each key of pulumi/resources.yaml takes (data/cloud-changes.yaml, by the provider's words)."""
    from clusterforge.render.resource_file import read
    from clusterforge.targets.aws.cloud_changes import table
    from clusterforge.targets.aws.cloud_resources import RESOURCES_FILE

    return table().classes(read(text, RESOURCES_FILE))


EFFECTS = TargetEffects(group_vars=GROUP_VARS, facts=STACK_FACTS, config=stack_config_effect, host_vars=HOST_VARS,
                        descriptions=DESCRIPTIONS, config_dir="pulumi/", config_entries=stack_config_entries,
                        resources_file="pulumi/resources.yaml", resource_classes=resource_classes)
