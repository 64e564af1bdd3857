"""Blueprint shape: each invalid case names its line and says what is wrong."""

from __future__ import annotations

import pytest

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from tests.conftest import EXAMPLES, example_files

ONPREM = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
AWS = (EXAMPLES / "aws-p5.yaml").read_text()


@pytest.mark.parametrize("path", example_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_examples_are_valid(path) -> None:
    loaded = load_text(path.read_text(), str(path))
    assert loaded.cluster.pools


def test_design_only_blueprint_without_site_is_valid() -> None:
    loaded = load_text(
        "apiVersion: clusterforge/v1\nkind: Cluster\nname: x\ntarget: onprem\n"
        "pools: [{name: gpu, hardware: dgx-h100, count: 4}]\n")
    assert loaded.cluster.site is None


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# (base, old, new, needle-for-expected-line, message fragment)
INVALID = [
    ("onprem", "hardware: dgx-h100, count: 16", "hardware: dgx-h100, cuont: 16", "cuont", "did you mean count"),
    ("onprem", "max_weight_kg: 1361", "max_weight_kg: heavy", "heavy", "expected a number"),
    ("onprem", "hardware: dgx-h100", "hardware: dgx-h10", "dgx-h10", "did you mean dgx-h100"),
    ("onprem", "kind: rdhx, air_kw: 50", "kind: rdhx, air_kww: 50", "air_kww", "did you mean air_kw"),
    ("onprem", "kind: rdhx, air_kw: 50", "kind: rdhx", "kind: rdhx", "missing required key 'air_kw'"),
    ("onprem", "kind: rdhx", "kind: rdx", "kind: rdx", "did you mean rdhx"),
    ("onprem", "name: vision-h100", "name: Vision_H100", "Vision_H100", "is not a lowercase name"),
    ("onprem", "target: onprem", "target: gcp", "target: gcp", "unknown target 'gcp'"),
    ("onprem", "side: A, voltage: 415, amps: 60, phase: 3}\n            - {name: a01-b",
     "side: A, voltage: 415, amps: 60, phase: 2}\n            - {name: a01-b", "phase: 2", "1 or 3"),
    ("onprem", "partitions: [{name: train, pools: [gpu]", "partitions: [{name: train, pools: [gpu2]",
     "pools: [gpu2]", "unknown pool 'gpu2'"),
    ("onprem", "devices: [{pool: gpu, count: 3}]", "devices: [{pool: gpus, count: 3}]", "pool: gpus",
     "unknown pool 'gpus'"),
    ("onprem", "devices: [{pool: gpu, count: 3}]", "devices: [{pool: gpu, count: 4}]", "count: 4",
     "placements add up to 20"),
    ("onprem", "name: b02,", "name: a01,", "name: a01,", "duplicate rack name 'a01'"),
    ("onprem", "fabric: {kind: infiniband, switch: qm9700", "fabric: {kind: infiniband, switch: dgx-h100",
     "switch: dgx-h100", "not a switch"),
    ("onprem", "fabric: {kind: infiniband, switch: qm9700, oversubscription: 1.0, rail_optimized: true}",
     "fabric: {kind: efa}", "fabric: {kind: efa", "AWS-only"),
    ("onprem", "hardware: dgx-h100", "hardware: p5.48xlarge", "p5.48xlarge", "needs a server"),
    ("aws", "aws:\n", "aws_:\n", "aws_:", "unknown key 'aws_'"),
    ("aws", "hardware: p5.48xlarge", "hardware: dgx-h100", "dgx-h100", "needs an instance"),
    ("aws", "type: capacity-block, reservation_id: cr-0123456789abcdef0", "type: capacity-block",
     "type: capacity-block", "missing required key 'reservation_id'"),
    ("aws", "reservation_id: cr-0123456789abcdef0", "reservation_id: cr-XYZ", "cr-XYZ",
     "is not a capacity reservation id"),
    ("aws", "count: 64", "count: -1", "count: -1", "greater than or equal to 0"),  # 0 with max_count
    ("aws", "deployment_type: PERSISTENT_2", "deployment_type: PERSISTENT_3", "PERSISTENT_3", "PERSISTENT_2"),
    ("aws", "lustre: {mount: /fsx, capacity_gib: 50400, deployment_type: PERSISTENT_2, throughput_mb_s_per_tib: 250}",
     "lustre: {mount: /fsx}", "lustre:", "on AWS, lustre is FSx"),
]


@pytest.mark.parametrize(("base", "old", "new", "needle", "fragment"), INVALID,
                         ids=[f"{c[0]}-{c[4][:30]}" for c in INVALID])
def test_invalid_blueprints_name_line_and_reason(base: str, old: str, new: str, needle: str, fragment: str) -> None:
    original = ONPREM if base == "onprem" else AWS
    assert old in original, "test case no longer matches the example"
    text = original.replace(old, new, 1)
    with pytest.raises(ClusterforgeError) as exc:
        load_text(text, "bp.yaml")
    matching = [p for p in exc.value.problems if fragment in p.message + " " + p.hint]
    assert matching, [p.render() for p in exc.value.problems]
    assert matching[0].line == _line_of(text, needle), [p.render() for p in exc.value.problems]


def test_aws_target_needs_aws_section() -> None:
    text = "\n".join(line for line in AWS.splitlines() if not line.startswith(("aws:", "  region", "  availab",
                                                                              "  vpc", "  capacity")))
    with pytest.raises(ClusterforgeError, match=r"target: aws needs an `aws:` section"):
        load_text(text)


def test_all_problems_reported_at_once() -> None:
    text = ONPREM.replace("max_inlet_c: 27", "max_inlet_c: hot").replace("pue: 1.3", "pue: 0.5")
    with pytest.raises(ClusterforgeError) as exc:
        load_text(text)
    assert len(exc.value.problems) == 2


@pytest.mark.parametrize(("old", "new", "message"), [
    ("{name: a02-a, side: A", "{name: a01-a, side: A", "duplicate feed name 'a01-a'"),
    ("{name: a02-b, side: B", "{name: a02-a, side: B", "duplicate feed name 'a02-a'"),
])
def test_duplicate_feed_names_point_at_the_second_feed(old: str, new: str, message: str) -> None:
    """Names are compared first and paths built only when one repeats: the line must still be the repeat's."""
    text = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    assert old in text
    broken = text.replace(old, new, 1)
    with pytest.raises(ClusterforgeError) as err:
        load_text(broken, "f.yaml")
    [problem] = [p for p in err.value.problems if "duplicate feed" in p.message]
    assert message in problem.message
    assert problem.line == next(i for i, line in enumerate(text.splitlines(), 1) if old in line)
    assert problem.path.endswith(".name") and ".feeds[" in problem.path
