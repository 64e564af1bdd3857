"""Oversubscription per tier (issue 17): `fabric.oversubscription` is one number (the leaf's down:up, as since v1)
or a mapping `{leaf: x, spine: y}`; a three-tier tree's spines at y:1 give more leaves per pod and fewer cores.

Hand-worked on QM9700 (k = 64). 600 DGX H100 = 4,800 endpoints, past k²/2 = 2,048, so three tiers; leaves at
1:1 have 32 down and 32 up, so 150 leaves. Spines at 1:1: 32 down, 32 up → 150 spines, 75 cores, k³/4 = 65,536
endpoints at most. Spines at 2:1: ⌊64·2/3⌋ = 42 down and ⌈42/2⌉ = 21 up → ⌈150·32/42⌉ = 115 spines,
⌈115·21/64⌉ = 38 cores, and 32 · 42 · 64 = 86,016 endpoints at most (a core has 64 ports, one per pod of 42
leaves of 32 endpoints).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clusterforge.plan.fabric import capacity, leaf_split, size_fat_tree, spine_split, tiers_needed
from tests.plan_builders import plan_of
from tests.policies.builders import config, design, evaluate_data, found


def dgx(nodes: int, **fabric: object) -> dict:
    data = design([{"name": "gpu", "hardware": "dgx-h100", "count": nodes, "partition": "train"}])
    data["fabric"].update(fabric)
    return data


def sizes(tree: object) -> tuple[int, ...]:
    return tuple(getattr(tree, name) for name in ("tiers", "leaves", "spines", "cores", "capacity"))


@pytest.mark.parametrize(("spine", "expect"), [
    (1.0, (3, 150, 150, 75, 65_536)),
    (2.0, (3, 150, 115, 38, 86_016)),
])
def test_spine_oversubscription_sizes_the_tree(spine: float, expect: tuple[int, ...]) -> None:
    tree = plan_of(dgx(600, oversubscription={"leaf": 1.0, "spine": spine})).fabric
    assert sizes(tree) == expect
    assert tree is not None and tree.cables["spine-core"] == tree.spines * tree.spine_uplinks
    assert (tree.spine_downlinks, tree.spine_uplinks) == ((32, 32) if spine == 1.0 else (42, 21))


def test_leaf_ratio_in_the_mapping_is_the_single_number() -> None:
    # leaves at 3:1: 48 down, 16 up → 100 leaves; 48 · 64 = 3,072 < 4,800 so three tiers: 50 spines, 25 cores
    single = plan_of(dgx(600, oversubscription=3.0)).fabric
    mapping = plan_of(dgx(600, oversubscription={"leaf": 3.0})).fabric
    assert single == mapping and sizes(single) == (3, 100, 50, 25, 48 * 64 * 32)


@pytest.mark.parametrize("nodes", [16, 128, 256, 257, 512, 2048])
@pytest.mark.parametrize("leaf", [1.0, 1.5, 2.0, 7.0])
def test_single_number_keeps_every_result(nodes: int, leaf: float) -> None:
    """The single-number form is sized exactly as before per-tier ratios existed: the old formulas, inline."""
    tree = plan_of(dgx(nodes, oversubscription=leaf)).fabric
    assert tree is not None
    k, endpoints = 64, nodes * 8
    down, up = leaf_split(k, leaf)
    old_capacity = {1: k, 2: down * k, 3: down * k * (k // 2)}
    tiers = next((t for t in (1, 2, 3) if endpoints <= old_capacity[t]), 4)
    assert (tree.tiers, tree.capacity) == (min(tiers, 3), old_capacity[min(tiers, 3)])
    leaves = -(-endpoints // down)
    if tree.tiers == 2:
        assert (tree.leaves, tree.spines, tree.cores) == (leaves, -(-leaves * up // k), 0)
    elif tree.tiers == 3:
        spines = -(-leaves * up // (k // 2))
        assert (tree.leaves, tree.spines, tree.cores) == (leaves, spines, -(-spines * (k // 2) // k))
        assert tree.cables["spine-core"] == spines * (k // 2)


@pytest.mark.parametrize("radix", [64, 128, 144, 288])
def test_spines_at_one_to_one_split_their_ports_in_half(radix: int) -> None:
    assert spine_split(radix, 1.0) == (radix // 2, radix // 2)
    assert capacity(radix, 3) == radix ** 3 // 4


def test_spine_ratio_changes_nothing_at_two_tiers() -> None:
    # 128 DGX = 1,024 endpoints: a two-tier spine has no uplinks (SuperPOD: 32 leaves, 16 spines)
    tree = plan_of(dgx(128, oversubscription={"spine": 4.0})).fabric
    assert sizes(tree) == (2, 32, 16, 0, 2048) and tree is not None and tree.ratio_note == "1:1"


def test_oversubscribed_spines_carry_past_k_cubed_over_four() -> None:
    # 70,000 endpoints: more than 65,536 at 1:1 (NET-001), within 86,016 with spines at 2:1
    assert tiers_needed(70_000, 64) == 4 and tiers_needed(70_000, 64, 1.0, 2.0) == 3
    assert size_fat_tree(70_000, 64, spine_oversubscription=2.0).tiers == 3
    assert found(dgx(8750)) == ["NET-001"]
    assert found(dgx(8750, oversubscription={"spine": 2.0}), config=config(**{"NET-002": {"enabled": False}})) == []


def test_pods_hold_as_many_leaves_as_a_spine_has_downlinks() -> None:
    topology = plan_of(dgx(600, oversubscription={"leaf": 1.0, "spine": 2.0})).topology
    assert topology is not None
    spines = [s for s in topology.switches if s.tier == "spine"]
    leaves = [s.name for s in topology.switches if s.tier == "leaf"]
    assert spines[0].children == tuple(leaves[:42])  # one pod: 42 leaves, not k/2 = 32
    assert max(len(s.children) for s in spines) == 42
    assert {leaf for s in spines for leaf in s.children} == set(leaves)


@pytest.mark.parametrize(("nodes", "ratios", "paths"), [
    (600, {"leaf": 1.0, "spine": 2.0}, ["fabric.oversubscription.spine"]),
    (600, {"leaf": 2.0, "spine": 2.0}, ["fabric.oversubscription.leaf", "fabric.oversubscription.spine"]),
    (128, {"leaf": 1.0, "spine": 2.0}, []),  # two tiers: the spine ratio is moot
    (600, 2.0, ["fabric.oversubscription"]),  # the single number keeps its path
    (600, {"leaf": 1.0, "spine": 1.0}, []),
])
def test_net002_per_tier(nodes: int, ratios: object, paths: list[str]) -> None:
    verdict = evaluate_data(dgx(nodes, oversubscription=ratios))
    assert sorted(f.path for f in verdict.findings if f.id == "NET-002") == paths
    allowed = config(**{"NET-002": {"max_oversubscription": 2.0}})
    assert "NET-002" not in found(dgx(nodes, oversubscription=ratios), config=allowed)


@pytest.mark.parametrize(("cores", "fails"), [(37, True), (38, False)])
def test_net004_counts_the_spines_uplinks(cores: int, fails: bool) -> None:
    # 115 spines × 21 uplinks = 2,415 cables: 37 cores would need 66 ports each, 38 need 64
    data = dgx(600, oversubscription={"spine": 2.0}, cores=cores)
    cfg = config(**{"NET-002": {"enabled": False}})
    assert found(data, config=cfg) == (["NET-004"] if fails else [])


BLUEPRINT = """\
apiVersion: clusterforge/v1
kind: Cluster
name: t
target: onprem
pools:
  - {name: gpu, hardware: dgx-h100, count: 600, partition: train}
fabric:
  kind: infiniband
  switch: qm9700
  oversubscription: RATIOS
slurm:
  partitions: [{name: train, pools: [gpu], default: true}]
"""


@pytest.mark.parametrize(("ratios", "error"), [
    ("{leaf: 1.0, core: 2}", "fabric.oversubscription.core: unknown key 'core'"),
    ("{spine: 0.5}", "fabric.oversubscription.spine: Input should be greater than or equal to 1"),
    ("{spine: .inf}", "fabric.oversubscription.spine: expected a finite number"),
    ("0.5", "fabric.oversubscription: Input should be greater than or equal to 1"),
    ("[1, 2]", "fabric.oversubscription: expected a number, got a list"),
])
def test_invalid_ratios_are_input_errors(cli, write, ratios: str, error: str) -> None:
    path: Path = write(BLUEPRINT.replace("RATIOS", ratios))
    result = cli("check", path)
    assert result.exit_code == 2
    assert f"{path}:10: {error}" in result.output
    assert "Traceback" not in result.output


def test_plan_and_report_show_each_tier(cli, write, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole table rows and lines, as matched below
    path = write(BLUEPRINT.replace("RATIOS", "{leaf: 1.0, spine: 2.0}"))
    text = cli("plan", path, "--skip", "NET-002").output
    assert "oversubscription leaf 1:1, spine 2:1" in text
    assert "32 down / 32 up (1:1)" in text and "42 down / 21 up (2:1)" in text
    data = yaml.safe_load(cli("plan", path, "-f", "json").stdout)
    assert data["fabric"]["spine_oversubscription"] == 2.0 and data["fabric"]["cores"] == 38
    out = tmp_path / "r.html"
    assert cli("report", path, "-o", out).exit_code == 0
    html = out.read_text()
    assert "at leaf 1:1, spine 2:1; carries up to 86,016 endpoints" in html
    assert "42 down / 21 up each (2:1)" in html
