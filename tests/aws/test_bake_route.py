"""The image bake needs a route to its packages: with the default `natGateway: false` and no `packageMirror`, the
program refuses before it declares anything (a preview shows the refusal), instead of a build that fails after up
to three hours of `pulumi up`. A pinned AMI bakes nothing and needs no route."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.aws.blueprints import example, write
from tests.aws.conftest import EXAMPLES, PINNED, Run, run_main

Stack = Callable[..., Run]
IMAGE = "aws:imagebuilder/image:Image"
NAT = "aws:ec2/natGateway:NatGateway"


def test_a_bake_without_a_route_is_refused_at_preview(stack: Stack) -> None:
    run = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "packageMirror": "false"}), expect_error=True)
    message = str(run.error)
    assert "clusterforge refuses to deploy aws-p5.yaml" in message
    assert "stack config: natGateway: the node image is baked in the stack's private subnets, which have no route " \
           "to package repositories" in message
    assert "set natGateway: true; or packageMirror: true" in message
    assert run.recorder.resources == []  # refused before the first resource


@pytest.mark.parametrize("route", [{"natGateway": "true"}, {"packageMirror": "true"}])
def test_a_route_lets_the_bake_run(stack: Stack, route: dict[str, str]) -> None:
    rec = stack(run_main({"blueprint": str(EXAMPLES / "aws-p5.yaml"), "packageMirror": "false"} | route)).recorder
    assert [i.name for i in rec.of_type(IMAGE)] == ["compute-image-nvidia"]
    assert len(rec.of_type(NAT)) == (1 if "natGateway" in route else 0)


def test_a_pinned_ami_bakes_nothing_and_needs_no_route(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5")
    data["aws"]["ami"] = PINNED
    rec = stack(run_main({"blueprint": str(write(tmp_path, data)), "packageMirror": "false"})).recorder
    assert not rec.of_type(IMAGE) and not rec.of_type(NAT)
