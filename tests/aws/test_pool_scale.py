"""The stack is O(pools): the AWS example with 16 GPU nodes and with 12,500 declares the same resources, none of
them a compute instance (slurmctld launches those from the pool's template). The time it takes is measured in
benchmarks/pulumi_pools.py, not asserted here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.aws.blueprints import example, write
from tests.aws.conftest import Recorder, Run, build_blueprint

Stack = Callable[..., Run]
INSTANCE = "aws:ec2/instance:Instance"


def sized(nodes: int) -> dict[str, Any]:
    """aws-p5 with `nodes` GPU nodes on demand (a Capacity Block holds at most 64) in a VPC with room for them."""
    data = example("aws-p5")
    data["pools"][0]["count"] = nodes
    data["aws"] |= {"capacity": {"type": "on-demand"}, "vpc_cidr": "10.0.0.0/14"}
    return data


def inventory_of(rec: Recorder) -> Counter[str]:
    return Counter(r.typ for r in rec.resources)


@pytest.mark.parametrize("nodes", [12_500])
def test_16_and_12500_nodes_declare_the_same_resources(stack: Stack, tmp_path: Path, nodes: int) -> None:
    small = stack(build_blueprint(write(tmp_path, sized(16), "small.yaml")))
    large = stack(build_blueprint(write(tmp_path, sized(nodes), "large.yaml")))
    assert inventory_of(small.recorder) == inventory_of(large.recorder)
    for run, count in ((small, 16), (large, nodes)):
        instances = run.recorder.of_type(INSTANCE)
        assert [i.inputs["tags"]["clusterforge:role"] for i in instances] == ["controller"]
        [template] = run.value["launch_templates"]
        assert template["nodes"] == count and template["name"] == "nlp-p5-gpu"
