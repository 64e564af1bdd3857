"""The traps that make Pulumi mock tests pass without checking anything, each shown to be closed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest

from tests.aws.conftest import Run, build_example

Stack = Callable[..., Run]


def test_a_program_that_registers_nothing_fails_the_fixture(stack: Stack) -> None:
    """No mocks seen, a forgotten call, an early return: the fixture refuses an empty recording."""
    with pytest.raises(AssertionError, match="registered nothing"):
        stack(lambda: None)


def test_mocks_are_fresh_per_run_and_never_a_preview(stack: Stack) -> None:
    seen: list[bool] = []

    def program() -> None:
        seen.append(pulumi.runtime.is_dry_run())
        aws.ec2.Vpc("one", cidr_block="10.0.0.0/16")

    first = stack(program)
    second = stack(program)
    assert seen == [False, False]  # a preview would turn missing outputs into unknowns and skip applies
    assert [r.name for r in first.recorder.resources] == ["one"]
    assert [r.name for r in second.recorder.resources] == ["one"]  # the first recorder got nothing more


def test_registrations_behind_applies_are_drained(stack: Stack) -> None:
    """A resource whose inputs wait on another's outputs is still recorded before `stack` returns."""

    def program() -> None:
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        vpc.id.apply(lambda i: aws.ec2.Subnet("late", vpc_id=i, cidr_block="10.0.0.0/24"))

    rec = stack(program).recorder
    assert rec.named("late").inputs["vpcId"] == "vpc-id"


def test_exports_do_not_leak_between_runs(stack: Stack) -> None:
    def program(key: str) -> Callable[[], None]:
        def run() -> None:
            aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
            pulumi.export(key, 1)
        return run

    assert stack(program("first")).exports == {"first": 1}
    assert stack(program("second")).exports == {"second": 1}


def test_inputs_are_wire_names_and_numbers_are_floats(stack: Stack) -> None:
    """Tests read camelCase keys; a snake_case key would silently be absent. Numbers compare by value."""
    template: dict[str, Any] = stack(build_example("aws-p6-b200")).recorder.named("compute-gpu-lt").inputs
    assert "networkInterfaces" in template and "network_interfaces" not in template
    card = template["networkInterfaces"][1]["networkCardIndex"]
    assert isinstance(card, float) and card == 1
