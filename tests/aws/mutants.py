"""Break the stack on purpose and check that its tests notice: `python -m tests.aws.mutants [name ...]`.

Each mutant replaces one snippet of the code (it must occur exactly once), runs the tests that guard it,
expects them to fail, and restores the file. A mutant whose tests still pass is a test that checks nothing.
Not collected by pytest (it edits the working tree); run it by hand after changing the stack or its tests.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = "clusterforge/targets/aws"
COMP = f"{PKG}/components"
T = "tests/aws"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = (
    Mutant(
        "efa-only cards on device 0",
        f"{PKG}/layout.py",
        "Interface(card, 1, EFA_ONLY)",
        "Interface(card, 0, EFA_ONLY)",
        (f"{T}/test_compute.py::test_p5_has_32_cards",),
    ),
    Mutant(
        "efa instead of efa-only",
        f"{PKG}/layout.py",
        "Interface(card, 1, EFA_ONLY)",
        "Interface(card, 1, EFA)",
        (f"{T}/test_compute.py::test_full_efa_layout",),
    ),
    Mutant(
        "one card short",
        f"{PKG}/layout.py",
        "range(1, interfaces)",
        "range(1, interfaces - 1)",
        (f"{T}/test_compute.py::test_full_efa_layout", f"{T}/test_compute.py::test_p4d_layout"),
    ),
    Mutant(
        "p6-b300 card 0 gets efa",
        f"{PKG}/layout.py",
        "return (Interface(0, PRIMARY, STANDARD), *(Interface(card, 0, EFA_ONLY)",
        "return (Interface(0, PRIMARY, EFA), *(Interface(card, 0, EFA_ONLY)",
        (f"{T}/test_compute.py::test_p6_b300_template_keeps_card_0_for_the_primary_ena_interface",
         f"{T}/test_design.py::test_p6_b300_keeps_card_0_for_the_primary_ena_interface"),
    ),
    Mutant(
        "p6-b300 loses card 16",
        f"{PKG}/layout.py",
        "range(1, interfaces + 1)",
        "range(1, interfaces)",
        (f"{T}/test_compute.py::test_p6_b300_template_keeps_card_0_for_the_primary_ena_interface",
         f"{T}/test_compute.py::test_p6_b300_with_fewer_interfaces_starts_at_card_1"),
    ),
    Mutant(
        "catalog's ENA-only card 0 ignored",
        f"{PKG}/layout.py",
        "efa_layout(interfaces, instance.primary_card_efa)",
        "efa_layout(interfaces)",
        (f"{T}/test_compute.py::test_p6_b300_template_keeps_card_0_for_the_primary_ena_interface",
         f"{T}/test_render_from_stack.py::test_the_p6_b300_template_from_new_to_render_from_stack"),
    ),
    Mutant(
        "EFA on an ENA-only card 0 let through",
        f"{PKG}/efa.py",
        "- set(instance.efa_cards))",
        "- set(range(instance.network_cards)))",
        (f"{T}/test_crossguard_on_stack.py::test_the_p6_b300_template_passes_the_pack_and_a_p5_style_layout_does_not",
         "tests/test_crossguard.py::test_p6_b300_takes_efa_on_cards_1_to_16_only"),
    ),
    Mutant(
        "pool's efa_interfaces ignored",
        f"{PKG}/design.py",
        "efa_interfaces(pool, instance))",
        "instance.efa_max_interfaces)",
        (f"{T}/test_compute.py::test_a_pool_may_use_fewer_interfaces",),
    ),
    Mutant(
        "IMDSv1 allowed",
        f"{COMP}/launch_template.py",
        'http_tokens="required"',
        'http_tokens="optional"',
        (f"{T}/test_compute.py::test_imdsv2_is_required_everywhere",),
    ),
    Mutant(
        "root volume unencrypted",
        f"{COMP}/launch_template.py",
        'encrypted="true"',
        'encrypted="false"',
        (f"{T}/test_compute.py::test_root_volume_is_encrypted_on_the_amis_root_device",),
    ),
    Mutant(
        "root volume on a fixed device",
        f"{COMP}/launch_template.py",
        "device_name=device_name,",
        'device_name="/dev/xvda",',
        (f"{T}/test_compute.py::test_root_volume_is_encrypted_on_the_amis_root_device",),
    ),
    Mutant(
        "pool root_volume_gib ignored",
        f"{PKG}/design.py",
        "pool.root_volume_gib or instance.root_volume_gib",
        "instance.root_volume_gib",
        (f"{T}/test_compute.py::test_root_volume_is_encrypted_on_the_amis_root_device",),
    ),
    Mutant(
        "customer key dropped from EBS",
        f"{COMP}/launch_template.py",
        "kms_key_id=kms_key_arn,",
        "",
        (f"{T}/test_compute.py::test_a_customer_key_encrypts_the_root_volumes",),
    ),
    Mutant(
        "no capacity-block market",
        f"{COMP}/launch_template.py",
        "if target.kind == CAPACITY_BLOCK:",
        "if False:",
        (f"{T}/test_compute.py::test_capacity_block_is_targeted_not_bought",),
    ),
    Mutant(
        "reservation not targeted",
        f"{COMP}/launch_template.py",
        "capacity_reservation_id=target.reservation_id",
        "capacity_reservation_id=None",
        (f"{T}/test_compute.py::test_odcr_is_targeted_without_a_market",),
    ),
    Mutant(
        "on-demand gets a reservation",
        f"{PKG}/design.py",
        "if pool.role != RESERVED_ROLE or not isinstance(",
        "if pool.role != RESERVED_ROLE and not isinstance(",
        (f"{T}/test_compute.py::test_capacity_block_is_targeted_not_bought", f"{T}/test_design.py::test_design_of_p5"),
    ),
    Mutant(
        "spread placement",
        f"{COMP}/pool.py",
        'CLUSTER_STRATEGY = "cluster"',
        'CLUSTER_STRATEGY = "spread"',
        (f"{T}/test_compute.py::test_one_cluster_placement_group_per_efa_pool",),
    ),
    Mutant(
        "template without the group",
        f"{COMP}/pool.py",
        "replace(args, placement_group=group.name) if group is not None else args",
        "args",
        (f"{T}/test_compute.py::test_one_cluster_placement_group_per_efa_pool",),
    ),
    Mutant(
        "one node short",
        f"{COMP}/pool.py",
        "for node in pool.nodes:",
        "for node in pool.nodes[:-1] or pool.nodes:",
        (f"{T}/test_compute.py::test_one_instance_per_node",),
    ),
    Mutant(
        "template edits replace nodes",
        f"{COMP}/pool.py",
        'LAUNCH_ONLY = ["launch_template", "user_data"]',
        "LAUNCH_ONLY: list[str] = []",
        (f"{T}/test_compute.py::test_instances_are_the_planners_nodes_from_their_pools_template",),
    ),
    Mutant(
        "user data without the controller",
        f"{COMP}/pool.py",
        "controller.name, address), source)",
        "controller.name, None), source)",
        (f"{T}/test_compute.py::test_user_data_joins_each_node_to_the_controller",),
    ),
    Mutant(
        "bucket wildcard in the node role",
        f"{PKG}/policy_documents.py",
        '"Resource": f"{arn}/*"}]',
        '"Resource": "*"}]',
        (f"{T}/test_compute.py::test_node_role_is_ssm_plus_this_clusters_buckets",),
    ),
    Mutant(
        "EFA ingress from another group",
        f"{COMP}/security_groups.py",
        '_ingress(f"{name}-cluster-self-in", nodes, nodes,',
        '_ingress(f"{name}-cluster-self-in", nodes, lustre,',
        (f"{T}/test_network.py::test_efa_group_allows_all_traffic_to_and_from_itself",),
    ),
    Mutant(
        "no EFA self egress",
        f"{COMP}/security_groups.py",
        '_egress(f"{name}-cluster-self-out", nodes, nodes,',
        '_egress(f"{name}-cluster-self-out", nodes, None,',
        (f"{T}/test_network.py::test_efa_group_allows_all_traffic_to_and_from_itself",),
    ),
    Mutant(
        "wrong Lustre ports",
        f"{COMP}/security_groups.py",
        "((988, 988), (1018, 1023))",
        "((988, 988), (1021, 1023))",
        (f"{T}/test_network.py::test_lustre_ports_from_the_cluster_and_between_servers",),
    ),
    Mutant(
        "SSH from the internet",
        f"{COMP}/security_groups.py",
        "    return SecurityGroups(nodes, lustre, endpoints)",
        '    aws.vpc.SecurityGroupIngressRule(f"{name}-ssh", security_group_id=nodes.id, cidr_ipv4=ANYWHERE,'
        ' ip_protocol="tcp", from_port=22, to_port=22, opts=opts)\n    return SecurityGroups(nodes, lustre, endpoints)',
        (f"{T}/test_network.py::test_no_ingress_from_anywhere",),
    ),
    Mutant(
        "subnet by AZ name",
        f"{COMP}/network.py",
        "availability_zone_id=zone,",
        "availability_zone=zone,",
        (f"{T}/test_network.py::test_vpc_and_private_subnet_by_az_id",),
    ),
    Mutant(
        "endpoints without private DNS",
        f"{COMP}/egress.py",
        "private_dns_enabled=True",
        "private_dns_enabled=False",
        (f"{T}/test_network.py::test_endpoints_for_s3_and_session_manager",),
    ),
    Mutant(
        "NAT always",
        f"{COMP}/network.py",
        "if args.nat_gateway:",
        "if True:",
        (f"{T}/test_network.py::test_vpc_and_private_subnet_by_az_id",),
    ),
    Mutant(
        "throughput dropped",
        f"{COMP}/lustre.py",
        "per_unit_storage_throughput=fsx.throughput_mb_s_per_tib if persistent else None",
        "per_unit_storage_throughput=None",
        (f"{T}/test_storage.py::test_p5_file_system",),
    ),
    Mutant(
        "no metadata configuration",
        f"{COMP}/lustre.py",
        'return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")',
        "return None",
        (f"{T}/test_storage.py::test_p5_file_system",),
    ),
    Mutant(
        "FSx ignores the customer key",
        f"{COMP}/lustre.py",
        "kms_key_id=args.kms_key_arn if persistent else None",
        "kms_key_id=None",
        (f"{T}/test_storage.py::test_metadata_iops_and_a_customer_key",),
    ),
    Mutant(
        "checkpoints not exported",
        f"{COMP}/lustre.py",
        "CHECKPOINT_PATH, url, True, child)",
        "CHECKPOINT_PATH, url, False, child)",
        (f"{T}/test_storage.py::test_persistent_2_links_s3_through_associations",),
    ),
    Mutant(
        "bucket unversioned",
        f"{COMP}/bucket.py",
        'status="Enabled"',
        'status="Suspended"',
        (f"{T}/test_storage.py::test_checkpoint_bucket_is_versioned_encrypted_private_and_tls_only",),
    ),
    Mutant(
        "bucket SSE-S3",
        f"{COMP}/bucket.py",
        'sse_algorithm="aws:kms"',
        'sse_algorithm="AES256"',
        (f"{T}/test_storage.py::test_checkpoint_bucket_is_versioned_encrypted_private_and_tls_only",),
    ),
    Mutant(
        "public policies allowed",
        f"{COMP}/bucket.py",
        "block_public_policy=True",
        "block_public_policy=False",
        (f"{T}/test_storage.py::test_checkpoint_bucket_is_versioned_encrypted_private_and_tls_only",),
    ),
    Mutant(
        "policy errors ignored",
        f"{PKG}/guard.py",
        'analysis.refuse_on_errors(f"deploying {settings.blueprint.name}")',
        "pass",
        (f"{T}/test_program.py::test_policy_errors_register_nothing_and_name_the_rules",),
    ),
    Mutant(
        "refusal without lines",
        "clusterforge/pipeline/analysis.py",
        'f"{f.id}: {f.message}", f.file, f.line, f.path',
        'f"{f.id}: {f.message}", f.file, 0, f.path',
        (f"{T}/test_program.py::test_policy_errors_register_nothing_and_name_the_rules",),
    ),
    Mutant(
        "waivers not read",
        f"{PKG}/stack_main.py",
        'waivers=path("waivers")',
        "waivers=None",
        (f"{T}/test_program.py::test_a_waived_error_deploys",),
    ),
    Mutant(
        "an empty kmsKeyArn reaches the resources",
        f"{PKG}/stack_main.py",
        'kms_key_arn=config.get("kmsKeyArn") or None',
        'kms_key_arn=config.get("kmsKeyArn")',
        (f"{T}/test_program.py::test_the_project_defaults_mean_the_programs_defaults",),
    ),
    Mutant(
        "region from aws:region",
        f"{PKG}/program.py",
        'aws.Provider("aws", region=plan.region,',
        'aws.Provider("aws",',
        (f"{T}/test_program.py::test_config_reaches_the_program",),
    ),
    Mutant(
        "outputs swap ip and id",
        f"{PKG}/program.py",
        '"instance_id": n.instance.id, "private_ip": n.instance.private_ip',
        '"instance_id": n.instance.private_ip, "private_ip": n.instance.id',
        (f"{T}/test_program.py::test_outputs_carry_the_inventory",),
    ),
    Mutant(
        "inventory reaches the instance id",
        f"{PKG}/inventory.py",
        '{"ansible_host": node.private_ip,',
        '{"ansible_host": node.instance_id,',
        (f"{T}/test_inventory.py",),
    ),
    Mutant(
        "overlay keeps the planner's controller",
        f"{PKG}/inventory.py",
        'groups["slurm_controller"] = {"hosts": {}}',
        'groups.setdefault("slurm_controller", {"hosts": {}})',
        (f"{T}/test_inventory.py::test_overlay_adds_addresses_and_the_stacks_controller",),
    ),
    Mutant(
        "render ignores the stack",
        "clusterforge/render/inventory.py",
        "    if ctx.outputs is not None:",
        "    if False:",
        (f"{T}/test_render_from_stack.py",),
    ),
    Mutant(
        "render borrows a GPU node as controller",
        "clusterforge/pipeline/analysis.py",
        "if with_controller is not None:",
        "if False:",
        (f"{T}/test_render_from_stack.py",),
    ),
    Mutant(
        "preview without the policy pack",
        ".github/workflows/pulumi-aws.yml",
        "pulumi preview --stack \"$STACK\" --policy-pack ../../policies --diff",
        "pulumi preview --stack \"$STACK\" --diff",
        (f"{T}/test_workflow.py",),
    ),
    Mutant(
        "up without the approval environment",
        ".github/workflows/pulumi-aws.yml",
        "    environment: aws-production",
        "    environment: aws-preview",
        (f"{T}/test_workflow.py",),
    ),
    Mutant(
        "recorder in preview",
        f"{T}/conftest.py",
        'stack="test", preview=False',
        'stack="test", preview=True',
        (f"{T}/test_mock_traps.py::test_mocks_are_fresh_per_run_and_never_a_preview",),
    ),
    Mutant(
        "recorder accepts an empty run",
        f"{T}/conftest.py",
        "        if not expect_error:\n            assert recorder",
        "        if False:\n            assert recorder",
        (f"{T}/test_mock_traps.py::test_a_program_that_registers_nothing_fails_the_fixture",),
    ),
)


def caught(output: str) -> bool:
    """A test ran and failed; a collection error (the tests never ran) does not count."""
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    return " failed" in summary and " error" not in summary


def run(mutant: Mutant) -> tuple[bool, float]:
    path = ROOT / mutant.file
    original = path.read_text()
    if original.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.name}: snippet occurs {original.count(mutant.old)} times in {mutant.file}")
    mutated = original.replace(mutant.old, mutant.new)
    if path.suffix == ".py":
        compile(mutated, str(path), "exec")  # a mutant must still be valid Python
    path.write_text(mutated)
    try:
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutant.tests],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        return result.returncode != 0 and caught(result.stdout), time.perf_counter() - start
    finally:
        path.write_text(original)


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or m.name in names]
    survivors = []
    for mutant in chosen:
        caught, seconds = run(mutant)
        print(f"{'caught  ' if caught else 'SURVIVED'} {seconds:5.1f}s  {mutant.name}", flush=True)
        if not caught:
            survivors.append(mutant.name)
    print(f"{len(chosen) - len(survivors)}/{len(chosen)} mutants caught")
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
