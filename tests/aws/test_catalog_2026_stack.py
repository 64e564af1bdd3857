"""A p6e-gb200 UltraServer pool through the stack under Pulumi's mocks: the launch template names the instance
type the UltraServer holds, with that instance's full EFA layout."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.aws.conftest import Run, build_blueprint

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog2026"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
Stack = Callable[..., Run]


def test_an_ultraserver_pool_launches_its_instance_type_with_the_full_efa_layout(stack: Stack) -> None:
    template = stack(build_blueprint(FIXTURES / "aws-p6e-gb200-ultraserver.yaml")).recorder.one(
        LT, "compute-gb200-lt").inputs
    assert template["instanceType"] == "p6e-gb200.36xlarge"
    nics = [(n["networkCardIndex"], n["deviceIndex"], n.get("interfaceType")) for n in template["networkInterfaces"]]
    assert nics == [(0, 0, "efa"), *((card, 0 if card % 2 else 1, "efa-only") for card in range(1, 17))]
