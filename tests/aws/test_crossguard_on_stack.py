"""The CrossGuard pack (`pulumi preview --policy-pack policy-pack/`) over what the stack program registers:
the stack passes the same rules that would stop a hand-written one, and a broken resource is caught."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import unknown_checking_proxy

from clusterforge.targets.aws.crossguard.pack import policies
from tests.aws.blueprints import from_template
from tests.aws.conftest import EXAMPLES, ROOT, Recorder, Run, build_blueprint, build_example

Stack = Callable[..., Run]
PACK = ROOT / "policy-pack"


def policy_resources(rec: Recorder, change: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
                     ) -> list[PolicyResource]:
    """The recorded resources as a stack policy sees them after `up`: outputs (ids included) by type."""
    opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
    out = []
    for r in rec.resources:
        props = change(r.name, dict(r.outputs)) if change else r.outputs
        out.append(PolicyResource(r.typ, unknown_checking_proxy(props), f"urn:pulumi:test::clusterforge-aws::{r.typ}::"
                                  f"{r.name}", r.name, opts, None, None, [], {}))
    return out


def violations(resources: list[PolicyResource], blueprint: Path) -> list[str]:
    found: list[str] = []
    for policy in policies(base=PACK):
        def report(message: str, urn: str | None = None, name: str = policy.name) -> None:
            found.append(f"{name}: {message}")

        if isinstance(policy, StackValidationPolicy):
            policy.validate(StackValidationArgs(resources, {"blueprint": str(blueprint)}), report)
            continue
        for r in resources:
            policy.validate(ResourceValidationArgs(r.resource_type, r.props, r.urn, r.name, r.opts, None), report)
    return found


@pytest.mark.parametrize("example", ["aws-p5", "aws-p5en", "aws-p6-b200"])
def test_the_stack_passes_the_pack(stack: Stack, example: str) -> None:
    rec = stack(build_example(example)).recorder
    assert violations(policy_resources(rec), EXAMPLES / f"{example}.yaml") == []


@pytest.mark.parametrize("params", [{}, {"capacity": "odcr", "reservation_id": "cr-0abcdef0123456789"}])
def test_the_p6_b300_template_passes_the_pack_and_a_p5_style_layout_does_not(stack: Stack, tmp_path: Path,
                                                                            params: dict[str, str]) -> None:
    """What `pulumi preview --policy-pack` sees for `clusterforge new aws-p6-b300`: no violation; the same
    template with card 0 made `efa` (the p5 layout) is refused, since p6-b300's card 0 carries no EFA."""
    blueprint = from_template(tmp_path, "aws-p6-b300", **params)
    rec = stack(build_blueprint(blueprint)).recorder
    assert violations(policy_resources(rec), blueprint) == []

    def efa_on_card_0(name: str, props: dict[str, Any]) -> dict[str, Any]:
        if name != "compute-gpu-lt":
            return props
        first, *rest = props["networkInterfaces"]
        return props | {"networkInterfaces": [first | {"interfaceType": "efa"}, *rest]}

    found = violations(policy_resources(rec, efa_on_card_0), blueprint)
    assert found and {f.split(":")[0] for f in found} == {"NET-005"}
    assert any("network card 0 of p6-b300.48xlarge carries no EFA (ENA only)" in f for f in found)


def test_the_pack_and_the_blueprint_rule_agree_on_a_capacity_block_without_a_group(stack: Stack, tmp_path: Path
                                                                                      ) -> None:
    """NET-006 in the PR check and at preview: reserved capacity needs no placement group of its own."""
    data = yaml.safe_load((EXAMPLES / "aws-p5.yaml").read_text())
    assert data["aws"]["capacity"]["type"] == "capacity-block"
    data["pools"][0]["placement"] = "none"
    blueprint = tmp_path / "reserved.yaml"
    blueprint.write_text(yaml.safe_dump(data))
    rec = stack(build_blueprint(blueprint)).recorder  # the stack refuses unwaived blueprint errors
    assert not rec.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert violations(policy_resources(rec), blueprint) == []


def test_the_pack_and_the_blueprint_rule_agree_on_an_explicit_opt_out_on_demand(stack: Stack, tmp_path: Path
                                                                                  ) -> None:
    """On demand, `placement: none` is a NET-006 warning in the PR check; preview does not block it either, but a
    launch template that lost its group without the blueprint saying so is still a violation."""
    data = yaml.safe_load((EXAMPLES / "aws-p5.yaml").read_text())
    data["aws"]["capacity"] = {"type": "on-demand"}
    data["pools"][0]["placement"] = "none"
    blueprint = tmp_path / "spread.yaml"
    blueprint.write_text(yaml.safe_dump(data))
    rec = stack(build_blueprint(blueprint)).recorder
    assert not rec.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert violations(policy_resources(rec), blueprint) == []

    def untagged(name: str, props: dict[str, Any]) -> dict[str, Any]:
        tags = props.get("tags")
        if not isinstance(tags, dict) or "clusterforge:placement" not in tags:
            return props
        return props | {"tags": {k: v for k, v in tags.items() if k != "clusterforge:placement"}}

    found = violations(policy_resources(rec, untagged), blueprint)
    assert [v for v in found if v.startswith("NET-006: EFA launch template") and "outside a cluster placement group"
            in v] == found and len(found) == 1


def test_the_pack_sees_a_broken_stack(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder

    def spread(name: str, props: dict[str, Any]) -> dict[str, Any]:
        return props | {"strategy": "spread"} if name == "compute-gpu-pg" else props

    def one_card_too_many(name: str, props: dict[str, Any]) -> dict[str, Any]:
        if name != "compute-gpu-lt":
            return props
        nics = props["networkInterfaces"]
        return props | {"networkInterfaces": [*nics, {**nics[-1], "networkCardIndex": float(len(nics))}]}

    found = violations(policy_resources(rec, spread), EXAMPLES / "aws-p5.yaml")
    assert len(found) == 1 and found[0].startswith("NET-006: placement group compute-gpu-pg uses strategy 'spread'")
    found = violations(policy_resources(rec, one_card_too_many), EXAMPLES / "aws-p5.yaml")
    assert {f.split(":")[0] for f in found} == {"NET-005"}
    assert any("33 EFA interfaces exceed p5.48xlarge's maximum of 32" in f for f in found)
