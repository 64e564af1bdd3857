"""The CrossGuard pack without the Pulumi engine: each policy's `validate(args, report_violation)` called directly
with props shaped as the engine sends them (camelCase, numbers as floats, read-only proxies, unknown sentinels),
plus one run of the real pack process over gRPC."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UNKNOWN_STRING_VALUE, unknown_checking_proxy

from clusterforge.blueprint.load import load_text
from clusterforge.policies import evaluate
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.registry import REGISTRY, coverage
from clusterforge.targets.aws.crossguard import BLUEPRINT_POLICY
from clusterforge.targets.aws.crossguard.pack import enforcement, policies, resource_policy
from clusterforge.targets.aws.crossguard.tokens import (
    AUTOSCALING_GROUP,
    EGRESS_RULE,
    INGRESS_RULE,
    LAUNCH_TEMPLATE,
    LUSTRE,
    PLACEMENT_GROUP,
    SECURITY_GROUP,
)
from tests.conftest import EXAMPLES, ROOT

PACK_DIR = ROOT / "policy-pack"
POLICIES = {p.name: p for p in policies(base=PACK_DIR)}


def wire(value: Any) -> Any:
    """What the engine's protobuf Struct does to props: every number becomes a float."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        return {k: wire(v) for k, v in value.items()}
    return [wire(v) for v in value]


def urn(resource_type: str, name: str) -> str:
    return f"urn:pulumi:dev::gpu::{resource_type}::{name}"


def _opts() -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def validate(policy: str, resource_type: str, props: dict[str, Any], name: str = "res") -> list[str]:
    """Run one resource policy as the engine would and collect its violation messages."""
    args = ResourceValidationArgs(resource_type, unknown_checking_proxy(wire(props)), urn(resource_type, name), name,
                                  _opts(), None)
    found: list[str] = []
    assert POLICIES[policy].validate(args, lambda message, urn=None: found.append(message)) is None
    return found


# ---- NET-005: the launch template's EFA layout ----

def efa_layout(cards: int = 32) -> list[dict[str, Any]]:
    """AWS's layout (p5 use case 1): card 0 `efa` on device 0, every other card `efa-only` on device 1."""
    return [{"networkCardIndex": i, "deviceIndex": 0 if i == 0 else 1,
             "interfaceType": "efa" if i == 0 else "efa-only", "subnetId": "subnet-1",
             "securityGroups": ["sg-1"]} for i in range(cards)]


def lt_props(nics: list[dict[str, Any]], instance_type: Any = "p5.48xlarge", **extra: Any) -> dict[str, Any]:
    return {"instanceType": instance_type, "networkInterfaces": nics, **extra}


def test_p5_with_32_interfaces_passes() -> None:
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props(efa_layout())) == []


def efa_instance_types() -> list[tuple[str, int]]:
    from clusterforge.catalog import Instance
    from clusterforge.target_kernel import load_catalog

    return [(key, entry.efa_max_interfaces) for key, entry in load_catalog().items()
            if isinstance(entry, Instance) and entry.efa_max_interfaces]


def stack_layout(instance_type: str, interfaces: int) -> list[dict[str, Any]]:
    """The layout the stack builds for `interfaces` EFA devices on this type, as launch template props."""
    from clusterforge.catalog import Instance
    from clusterforge.target_kernel import load_catalog
    from clusterforge.targets.aws.layout import instance_layout

    instance = load_catalog().of(instance_type, Instance)
    return [{"networkCardIndex": nic.network_card_index, "deviceIndex": nic.device_index,
             **({} if nic.interface_type == "interface" else {"interfaceType": nic.interface_type}),
             "subnetId": "subnet-1", "securityGroups": ["sg-1"]} for nic in instance_layout(instance, interfaces)]


@pytest.mark.parametrize(("instance_type", "maximum"), efa_instance_types())
def test_every_efa_type_takes_its_full_layout_and_no_more(instance_type: str, maximum: int) -> None:
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props(stack_layout(instance_type, maximum), instance_type)) == []
    found = validate("NET-005", LAUNCH_TEMPLATE, lt_props(stack_layout(instance_type, maximum + 1), instance_type))
    assert f"{maximum + 1} EFA interfaces exceed {instance_type}'s maximum of {maximum}" in found


def test_p6_b300_takes_efa_on_cards_1_to_16_only() -> None:
    """p6-b300's card 0 is ENA only: the primary `interface` there and `efa-only` on cards 1-16 passes; AWS's
    p5-style layout (card 0 `efa`) or an `efa-only` beside the primary on card 0 is refused at preview."""
    b300 = "p6-b300.48xlarge"
    good = stack_layout(b300, 16)
    assert [(n["networkCardIndex"], n.get("interfaceType")) for n in good] == [
        (0, None), *((card, "efa-only") for card in range(1, 17))]
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props(good, b300)) == []
    p5_style = efa_layout(16)
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props(p5_style, b300)) == [
        "network card 0 of p6-b300.48xlarge carries no EFA (ENA only): EFA interfaces go on cards 1..16"]
    beside = [good[0], {**good[1], "networkCardIndex": 0, "deviceIndex": 1}, *good[2:]]
    assert "network card 0 of p6-b300.48xlarge carries no EFA (ENA only): EFA interfaces go on cards 1..16" in (
        validate("NET-005", LAUNCH_TEMPLATE, lt_props(beside, b300)))


def test_33_interfaces_fail() -> None:
    found = validate("NET-005", LAUNCH_TEMPLATE, lt_props(efa_layout(33)))
    assert "33 EFA interfaces exceed p5.48xlarge's maximum of 32" in found
    assert "network card indexes [32] are outside 0..31" in found


def test_repeated_card_index_fails() -> None:
    nics = efa_layout()
    nics[6]["networkCardIndex"] = 5
    found = validate("NET-005", LAUNCH_TEMPLATE, lt_props(nics))
    assert len(found) == 1 and found[0].startswith("network card indexes repeat: ")


def test_efa_only_primary_fails() -> None:
    nics = efa_layout()
    nics[0]["interfaceType"] = "efa-only"
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props(nics)) == [
        "the primary interface (card 0, device 0) cannot be efa-only"]


def test_omitted_indexes_are_zero() -> None:
    """AWS defaults: an interface without card and device index is the primary one."""
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props([{"interfaceType": "efa-only"}])) == [
        "the primary interface (card 0, device 0) cannot be efa-only"]
    nics = [{"deviceIndex": 0, "interfaceType": "efa"}, {"deviceIndex": 1, "interfaceType": "efa-only"}]
    assert validate("NET-005", LAUNCH_TEMPLATE, lt_props(nics)) == ["network card indexes repeat: 0, 0"]


@pytest.mark.parametrize("props", [
    lt_props(efa_layout(40), instance_type="x9.hyperlarge"),  # not in the catalog: nothing to check against
    lt_props(efa_layout(40), instance_type="dgx-h100"),  # a server key, not an instance type
    lt_props(UNKNOWN_ARRAY_VALUE),  # preview: the interfaces depend on resources not created yet
    lt_props(efa_layout(40), instance_type=UNKNOWN_STRING_VALUE),
    lt_props([*efa_layout(39), {"networkCardIndex": UNKNOWN_STRING_VALUE}]),
    {"namePrefix": "no-instance-type"},
])
def test_launch_templates_not_checkable_are_skipped(props: dict[str, Any]) -> None:
    assert validate("NET-005", LAUNCH_TEMPLATE, props) == []


def test_net005_ignores_other_resource_types() -> None:
    assert validate("NET-005", LUSTRE, lt_props(efa_layout(40))) == []


# ---- STO-001 / STO-002: FSx for Lustre ----

def fsx(capacity: Any = 50400, kind: str | None = "PERSISTENT_2", throughput: Any = 250, **extra: Any) -> dict:
    props = {"storageCapacity": capacity, "deploymentType": kind, "perUnitStorageThroughput": throughput,
             "subnetIds": "subnet-1", **extra}
    return {k: v for k, v in props.items() if v is not None}


def test_persistent_2_50400_at_250_passes() -> None:
    assert validate("STO-001", LUSTRE, fsx()) == []
    assert validate("STO-002", LUSTRE, fsx()) == []


def test_capacity_50000_fails_with_the_next_valid_size() -> None:
    assert validate("STO-001", LUSTRE, fsx(capacity=50000)) == [
        "storageCapacity 50,000 GiB is not valid: it must be 1,200 GiB, 2,400 GiB or a multiple of 2,400 GiB "
        "(PERSISTENT_2 SSD) (use 50,400 GiB)"]


def test_throughput_300_fails() -> None:
    assert validate("STO-002", LUSTRE, fsx(throughput=300)) == [
        "PERSISTENT_2 SSD throughput must be one of 125, 250, 500, 1000 MB/s/TiB, not 300 "
        "(e.g. perUnitStorageThroughput: 250)"]


@pytest.mark.parametrize(("props", "sto001", "sto002"), [
    (fsx(1200, "SCRATCH_2", None), [], []),
    (fsx(1200, "SCRATCH_2", 200), [], ["SCRATCH_2 has a fixed throughput; perUnitStorageThroughput is not accepted"]),
    (fsx(3600, None, None), [], []),  # deploymentType omitted: the provider's SCRATCH_1
    (fsx(4800, None, None), ["multiple of 3,600 GiB (SCRATCH_1 SSD)"], []),
    (fsx(6000, "PERSISTENT_1", 12, storageType="HDD"), [], []),
    (fsx(1800, "PERSISTENT_1", 12, storageType="HDD"), ["a multiple of 6,000 GiB (HDD at 12 MB/s/TiB)"], []),
    (fsx(2400, "PERSISTENT_2", None), [], ["and is required"]),
    # no PERSISTENT_2 HDD exists: no size rule is made up for it (once "a multiple of 1,800 GiB (HDD at 250 ...)")
    (fsx(2400, "PERSISTENT_2", 250, storageType="HDD"), ["cannot be judged: PERSISTENT_2 has no HDD storage"],
     ["PERSISTENT_2 does not offer HDD storage"]),
    (fsx(None, "PERSISTENT_2", 250, storageType="INTELLIGENT_TIERING"), [], []),  # no capacity or per-TiB tier
    (fsx(UNKNOWN_STRING_VALUE, "PERSISTENT_2", UNKNOWN_STRING_VALUE), [], []),  # unknown during preview
])
def test_lustre_variants(props: dict, sto001: list[str], sto002: list[str]) -> None:
    for policy, expected in (("STO-001", sto001), ("STO-002", sto002)):
        found = validate(policy, LUSTRE, props)
        assert len(found) == len(expected), (policy, found)
        for message, part in zip(found, expected, strict=True):
            assert part in message


def test_lustre_messages_match_the_blueprint_rule() -> None:
    """One helper behind both: the blueprint's STO-002 message is the start of the preview's."""
    text = (EXAMPLES / "aws-p5.yaml").read_text().replace("_per_tib: 250", "_per_tib: 300")
    [finding] = [f for f in evaluate(load_text(text, "bp.yaml")).findings if f.id == "STO-002"]
    [preview] = validate("STO-002", LUSTRE, fsx(throughput=300))
    assert preview.startswith(finding.message)


# ---- NET-006: placement, subnet and security group over the stack ----

def resource(resource_type: str, name: str, props: dict[str, Any],
             deps: dict[str, list[PolicyResource]] | None = None) -> PolicyResource:
    return PolicyResource(resource_type, unknown_checking_proxy(wire(props)), urn(resource_type, name), name, _opts(),
                          None, None, [], deps or {})


def stack(*, strategy: str = "cluster", ingress: str = "-1", egress: bool = True, placement: bool = True,
          subnets: int = 1, lt_extra: dict[str, Any] | None = None, inline: dict[str, Any] | None = None,
          interface_type: str = "efa") -> list[PolicyResource]:
    """A p5 cluster as stacks/aws builds it; each keyword breaks one thing."""
    sg = resource(SECURITY_GROUP, "efa-sg", {"id": "sg-1", "name": "efa-sg-1a2b", "vpcId": "vpc-1", **(inline or {})})
    rules = [resource(INGRESS_RULE, "efa-in", {"securityGroupId": "sg-1", "ipProtocol": ingress,
                                               "referencedSecurityGroupId": "sg-1"})]
    if egress:
        rules.append(resource(EGRESS_RULE, "efa-out", {"securityGroupId": "sg-1", "ipProtocol": "-1",
                                                       "referencedSecurityGroupId": "sg-1"}))
    pg = resource(PLACEMENT_GROUP, "pg", {"id": "gpu-pg", "name": "gpu-pg", "strategy": strategy})
    nics = [nic if interface_type == "efa" else {**nic, "interfaceType": interface_type} for nic in efa_layout()]
    lt = resource(LAUNCH_TEMPLATE, "gpu-lt", {"id": "lt-1", "name": "gpu-lt", **lt_props(nics), **(lt_extra or {}),
                                              **({"placement": {"groupName": "gpu-pg"}} if placement else {})})
    asg = resource(AUTOSCALING_GROUP, "gpu-asg", {"launchTemplate": {"id": "lt-1", "version": "$Latest"},
                                                  "vpcZoneIdentifiers": [f"subnet-{i}" for i in range(subnets)]})
    return [sg, *rules, pg, lt, asg]


def validate_stack(policy: str, resources: list[PolicyResource],
                   config: dict[str, Any] | None = None) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    args = StackValidationArgs(resources, config)
    assert POLICIES[policy].validate(args, lambda message, urn=None: found.append((message, urn))) is None
    return found


def test_efa_stack_passes() -> None:
    assert validate_stack("NET-006", stack()) == []


def test_spread_placement_group_fails() -> None:
    [(message, where)] = validate_stack("NET-006", stack(strategy="spread"))
    assert "placement group pg uses strategy 'spread'" in message and where == urn(PLACEMENT_GROUP, "pg")


def test_non_efa_template_may_use_any_placement() -> None:
    assert validate_stack("NET-006", stack(strategy="spread", interface_type="interface", egress=False)) == []


def test_missing_placement_group_fails_unless_capacity_is_reserved() -> None:
    [(message, where)] = validate_stack("NET-006", stack(placement=False))
    assert "launches outside a cluster placement group" in message and where == urn(LAUNCH_TEMPLATE, "gpu-lt")
    block = {"instanceMarketOptions": {"marketType": "capacity-block"},
             "capacityReservationSpecification": {"capacityReservationTarget": {
                 "capacityReservationId": "cr-0123456789abcdef0"}}}
    assert validate_stack("NET-006", stack(placement=False, lt_extra=block)) == []


def test_efa_group_over_two_subnets_fails() -> None:
    [(message, where)] = validate_stack("NET-006", stack(subnets=2))
    assert "spreads EFA instances over 2 subnets" in message and where == urn(AUTOSCALING_GROUP, "gpu-asg")


@pytest.mark.parametrize(("kwargs", "missing"), [
    ({"egress": False}, "egress"),
    ({"ingress": "tcp"}, "ingress"),
    ({"ingress": "tcp", "egress": False}, "egress or ingress"),
])
def test_security_group_without_self_rules_fails(kwargs: dict[str, Any], missing: str) -> None:
    [(message, where)] = validate_stack("NET-006", stack(**kwargs))
    assert f"efa-sg has no self-referencing all-traffic {missing} rule" in message
    assert where == urn(SECURITY_GROUP, "efa-sg")


def test_rule_referencing_another_group_does_not_count() -> None:
    resources = stack()
    other = resource(EGRESS_RULE, "efa-out", {"securityGroupId": "sg-1", "ipProtocol": "-1",
                                              "referencedSecurityGroupId": "sg-2"})
    resources = [other if r.name == "efa-out" else r for r in resources]
    [(message, _)] = validate_stack("NET-006", resources)
    assert "no self-referencing all-traffic egress rule" in message


def test_inline_self_rules_count() -> None:
    inline = {"ingress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}],
              "egress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True},
                         {"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]}]}
    assert validate_stack("NET-006", stack(ingress="tcp", egress=False, inline=inline)) == []
    inline["egress"] = inline["egress"][1:]  # all traffic out, but not to itself
    [(message, _)] = validate_stack("NET-006", stack(ingress="tcp", egress=False, inline=inline))
    assert "no self-referencing all-traffic egress rule" in message


def test_preview_resolves_unknown_ids_through_dependencies() -> None:
    """At the first preview no id exists yet: references are matched by the engine's property dependencies."""
    unknown = UNKNOWN_STRING_VALUE
    sg = resource(SECURITY_GROUP, "efa-sg", {"id": unknown, "name": unknown})
    other = resource(SECURITY_GROUP, "fsx-sg", {"id": unknown, "name": unknown})

    def rule(kind: str, name: str, referenced: PolicyResource) -> PolicyResource:
        return resource(kind, name, {"securityGroupId": unknown, "ipProtocol": "-1",
                                     "referencedSecurityGroupId": unknown},
                        {"securityGroupId": [sg], "referencedSecurityGroupId": [referenced]})

    pg = resource(PLACEMENT_GROUP, "pg", {"id": unknown, "name": unknown, "strategy": "cluster"})
    nics = [{**nic, "securityGroups": [unknown], "subnetId": unknown} for nic in efa_layout()]
    lt = resource(LAUNCH_TEMPLATE, "gpu-lt", {**lt_props(nics), "placement": {"groupName": unknown}},
                  {"networkInterfaces": [sg], "placement": [pg]})
    good = [sg, other, rule(INGRESS_RULE, "in", sg), rule(EGRESS_RULE, "out", sg), pg, lt]
    assert validate_stack("NET-006", good) == []
    bad = [sg, other, rule(INGRESS_RULE, "in", sg), rule(EGRESS_RULE, "out", other), pg, lt]
    [(message, _)] = validate_stack("NET-006", bad)
    assert "efa-sg has no self-referencing all-traffic egress rule" in message


# ---- clusterforge-blueprint: every rule over the stack's blueprint ----

def test_blueprint_policy_without_config_reports_nothing() -> None:
    assert validate_stack(BLUEPRINT_POLICY, []) == []


def test_blueprint_policy_passes_the_example() -> None:
    assert validate_stack(BLUEPRINT_POLICY, [], {"blueprint": "../examples/aws-p5.yaml"}) == []


@pytest.fixture
def bad_fsx(tmp_path: Path) -> Path:
    path = tmp_path / "nlp.yaml"
    path.write_text((EXAMPLES / "aws-p5.yaml").read_text().replace("capacity_gib: 50400", "capacity_gib: 50000"))
    return path


def test_blueprint_policy_reports_errors_as_file_line_id_message(bad_fsx: Path) -> None:
    [(message, where)] = validate_stack(BLUEPRINT_POLICY, [], {"blueprint": str(bad_fsx)})
    assert message == f"{bad_fsx}:13: STO-001: FSx capacity 50,000 GiB is not valid: it must be 1,200 GiB, 2,400 GiB " \
                      "or a multiple of 2,400 GiB (PERSISTENT_2 SSD)"
    assert where is None


def waiver_file(tmp_path: Path, expires: str) -> Path:
    path = tmp_path / "waivers.yaml"
    path.write_text(f"waivers:\n  - rule: STO-001\n    cluster: nlp-p5\n    target: storage.lustre.capacity_gib\n"
                    f"    reason: capacity grows to 50,400 GiB next quarter\n    expires: {expires}\n")
    return path


def test_blueprint_policy_honours_waivers_and_policy_config(bad_fsx: Path, tmp_path: Path) -> None:
    waived = {"blueprint": str(bad_fsx), "waivers": str(waiver_file(tmp_path, "2999-01-01"))}
    assert validate_stack(BLUEPRINT_POLICY, [], waived) == []
    expired = {"blueprint": str(bad_fsx), "waivers": str(waiver_file(tmp_path, "2001-01-01"))}
    found = [m for m, _ in validate_stack(BLUEPRINT_POLICY, [], expired)]
    assert sorted(m.split(": ")[1] for m in found) == ["STO-001", "WVR-001"]
    (tmp_path / "policy.yaml").write_text("rules:\n  STO-001: {level: warning}\n")
    relative = os.path.relpath(tmp_path / "policy.yaml", PACK_DIR)  # relative paths start at the pack directory
    assert validate_stack(BLUEPRINT_POLICY, [], {"blueprint": str(bad_fsx), "policyConfig": relative}) == []


def test_blueprint_policy_reports_unreadable_input(tmp_path: Path) -> None:
    [(message, _)] = validate_stack(BLUEPRINT_POLICY, [], {"blueprint": str(tmp_path / "missing.yaml")})
    assert message.startswith(str(tmp_path / "missing.yaml")) and "no such file" in message


# ---- the pack as a whole ----

def test_pack_has_one_policy_per_rule_plus_the_blueprint_policy() -> None:
    load_rules()
    assert set(POLICIES) == {*coverage(), BLUEPRINT_POLICY} == {"NET-005", "NET-006", "STO-001", "STO-002",
                                                               "STO-004", BLUEPRINT_POLICY}
    for name, policy in POLICIES.items():
        assert policy.enforcement_level == EnforcementLevel.MANDATORY, name
    assert enforcement("STO-003") == EnforcementLevel.ADVISORY  # warning rules advise


def test_a_crashing_check_is_reported_not_raised() -> None:
    def broken(props: Mapping[str, Any], catalog: object) -> list[str]:
        raise ZeroDivisionError("division by zero")

    load_rules()
    from clusterforge.target_kernel import load_catalog

    policy = resource_policy(REGISTRY["NET-005"], (LAUNCH_TEMPLATE,), broken, load_catalog())
    found: list[str] = []
    args = ResourceValidationArgs(LAUNCH_TEMPLATE, {}, urn(LAUNCH_TEMPLATE, "x"), "x", _opts(), None)
    policy.validate(args, lambda message, urn=None: found.append(message))
    assert found == ["policy NET-005 failed: ZeroDivisionError: division by zero (a clusterforge bug)"]


@pytest.fixture(scope="module")
def analyzer() -> Any:
    """The real pack process (policy-pack/__main__.py) serving gRPC, as `pulumi preview` starts it."""
    import grpc
    from pulumi.runtime.proto import analyzer_pb2_grpc

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, str(PACK_DIR / "__main__.py")], cwd=PACK_DIR, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        port = process.stdout.readline().decode().strip()
        assert port.isdigit(), process.stderr.read().decode() if process.stderr else port
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        process.kill()
        process.wait(timeout=10)


def struct(data: dict[str, Any]) -> Any:
    from google.protobuf import struct_pb2

    message = struct_pb2.Struct()
    message.update(data)
    return message


def test_pack_process_serves_the_policies(analyzer: Any) -> None:
    from google.protobuf import empty_pb2
    from pulumi.runtime.proto import analyzer_pb2

    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "clusterforge"
    assert {p.name: p.enforcementLevel for p in info.policies} == {
        name: analyzer_pb2.MANDATORY for name in (*coverage(), BLUEPRINT_POLICY)}

    def analyze(props: dict[str, Any]) -> list[str]:
        request = analyzer_pb2.AnalyzeRequest(type=LAUNCH_TEMPLATE, properties=struct(props),
                                              urn=urn(LAUNCH_TEMPLATE, "lt"), name="lt")
        return [d.message for d in analyzer.Analyze(request).diagnostics]

    assert analyze(lt_props(efa_layout())) == []
    nics = efa_layout()
    nics[6]["networkCardIndex"] = 5
    [message] = analyze(lt_props(nics))
    assert message.startswith("EFA interfaces: ")  # the engine prefixes the policy's description
    assert "\nnetwork card indexes repeat: 0, 1, 2, 3, 4, 5, 5, 7," in message


def test_pack_process_runs_the_blueprint_policy_with_pack_config(analyzer: Any, bad_fsx: Path) -> None:
    from pulumi.runtime.proto import analyzer_pb2

    config = analyzer_pb2.PolicyConfig(enforcementLevel=analyzer_pb2.MANDATORY,
                                       properties=struct({"blueprint": str(bad_fsx)}))
    analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={BLUEPRINT_POLICY: config}))
    response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=[]))
    messages = [d.message for d in response.diagnostics if d.policyName == BLUEPRINT_POLICY]
    assert len(messages) == 1 and f"{bad_fsx}:13: STO-001: FSx capacity 50,000 GiB" in messages[0]
