"""What a change to target aws's own rendered keys takes on day two: the region in all.yml, the facts a deployed
stack adds to hosts.yml, and the keys of the Pulumi stack config. `clusterforge.day2.effects` asks every target
for its table; nothing there names AWS."""

from __future__ import annotations

from clusterforge.day2.effects import Action, Effect, TargetEffects

GROUP_VARS: dict[str, tuple[Effect, ...]] = {
    "aws_region": (Effect(Action.REIMAGE, "all", "another region: every instance is replaced"),),
}

# What a deployed AWS stack adds to hosts.yml (`render --from-stack`; inventory.py host_vars and cluster_vars):
# facts, not settings. Compared only when both renders have them: a render without the stack's outputs says
# nothing about addresses, instance ids or where FSx is.
STACK_FACTS = frozenset({
    "ansible_host", "aws_instance_id", "aws_instance_type", "ansible_aws_ssm_instance_id",
    "slurm_controller_addr", "lustre_client_fsx_dns_name", "lustre_client_fsx_mount_name",
    "lustre_client_fsx_file_system_id", "clusterforge_checkpoint_bucket", "ansible_connection",
    "ansible_aws_ssm_region", "ansible_aws_ssm_bucket_name"})

# pulumi/Pulumi.<cluster>.yaml, by the part of a config key after its namespace
PULUMI_IGNORED = frozenset({"blueprint"})  # where the stack reads the blueprint: a path, not a setting
PULUMI_REPLACES = ("instance_type", "instancetype", "ami")  # a key holding one of these replaces instances
PULUMI_REPLACE = Effect(Action.REIMAGE, "all", "the instances are replaced (`pulumi up`), then provisioned")
PULUMI_OTHER = Effect(Action.NONE, "none", "pulumi up")


def stack_config_effect(key: str) -> Effect | None:
    """A stack config key's entry (`clusterforge-aws:instance_type`), or None for a key that is not a setting."""
    name = key.rpartition(":")[2].lower()
    if name in PULUMI_IGNORED:
        return None
    return PULUMI_REPLACE if any(word in name for word in PULUMI_REPLACES) else PULUMI_OTHER


EFFECTS = TargetEffects(group_vars=GROUP_VARS, facts=STACK_FACTS, config=stack_config_effect)
