"""Fabric sizing against the NVIDIA DGX SuperPOD reference table, and how the tree is wired.

SU = 32 DGX H100 × 8 rails = 256 endpoints on radix-64 QM9700 switches (32 down, 32 up at 1:1).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from clusterforge.core.hostlist import expand
from clusterforge.plan.fabric import size_fat_tree
from clusterforge.plan.topology import wire
from tests.plan_builders import plan_of
from tests.policies.builders import design

# scalable units -> (leaves, spines, cores), physical.md section (c); 1 SU: 8 leaves, 4 spines
SUPERPOD = {1: (8, 4, 0), 2: (16, 8, 0), 4: (32, 16, 0), 8: (64, 32, 0), 16: (128, 128, 64), 64: (512, 512, 256)}


def dgx(nodes: int, **fabric: object) -> dict:
    data = design([{"name": "gpu", "hardware": "dgx-h100", "count": nodes, "partition": "train"}])
    data["fabric"].update(fabric)
    return data


@pytest.mark.parametrize("units", sorted(SUPERPOD))
def test_superpod_table(units: int) -> None:
    fabric = plan_of(dgx(32 * units)).fabric
    assert fabric is not None
    assert (fabric.leaves, fabric.spines, fabric.cores) == SUPERPOD[units]
    assert fabric.tiers == (3 if units >= 16 else 2)


@pytest.mark.parametrize(("nodes", "tiers"), [(256, 2), (257, 3)])
def test_three_tiers_past_2048_endpoints(nodes: int, tiers: int) -> None:
    # k²/2 = 2,048 endpoints is the most two tiers of 64-port switches carry
    fabric = plan_of(dgx(nodes)).fabric
    assert fabric is not None and fabric.endpoints == nodes * 8 and fabric.tiers == tiers


def rail_groups(nodes: int, **fabric: object) -> dict[str, list[str]]:
    topology = plan_of(dgx(nodes, **fabric)).topology
    assert topology is not None
    return {s.name: list(s.nodes) for s in topology.switches if s.tier == "leaf"}


def test_rail_optimized_su_lands_nic_i_on_leaf_i() -> None:
    plan = plan_of(dgx(64))
    assert plan.topology is not None
    rails = plan.topology.rails
    assert rails["gpu-0001"] == tuple(f"leaf-{i:03d}" for i in range(1, 9))
    assert rails["gpu-0032"] == rails["gpu-0001"]
    assert rails["gpu-0033"] == tuple(f"leaf-{i:03d}" for i in range(9, 17))
    leaves = rail_groups(64)
    assert all(len(hosts) == 32 for hosts in leaves.values())  # every leaf port used once


def test_partial_su_shares_leaves_between_rails() -> None:
    # 16 nodes × 8 rails = 128 endpoints fill 4 leaves: rails 0-1 on leaf-001, 2-3 on leaf-002, ...
    plan = plan_of(dgx(16))
    assert plan.fabric is not None and plan.fabric.leaves == 4
    assert plan.topology is not None
    assert plan.topology.rails["gpu-0016"] == ("leaf-001", "leaf-001", "leaf-002", "leaf-002",
                                               "leaf-003", "leaf-003", "leaf-004", "leaf-004")


def test_not_rail_optimized_keeps_a_node_on_one_leaf() -> None:
    leaves = rail_groups(16, rail_optimized=False)
    assert leaves["leaf-001"] == [f"gpu-{i:04d}" for i in range(1, 5)]  # 32 ports / 8 NICs = 4 nodes
    assert len(leaves) == 4


def test_two_tiers_every_spine_reaches_every_leaf() -> None:
    topology = plan_of(dgx(128)).topology
    assert topology is not None
    spines = [s for s in topology.switches if s.tier == "spine"]
    assert len(spines) == 16
    assert all(s.children == tuple(f"leaf-{i:03d}" for i in range(1, 33)) for s in spines)


def test_three_tiers_pods_and_core_planes() -> None:
    # 16 SU: 128 leaves in 4 pods of 32, 32 spines per pod, 64 cores (2 per spine position, one spine per pod)
    topology = plan_of(dgx(512)).topology
    assert topology is not None
    spines = [s for s in topology.switches if s.tier == "spine"]
    cores = [s for s in topology.switches if s.tier == "core"]
    assert spines[0].children == tuple(f"leaf-{i:03d}" for i in range(1, 33))
    assert spines[32].children == tuple(f"leaf-{i:03d}" for i in range(33, 65))
    assert cores[0].children == ("spine-001", "spine-033", "spine-065", "spine-097")
    assert cores[32].children == cores[0].children
    # every spine uplink lands somewhere: each spine is below exactly two cores
    below = [name for core in cores for name in core.children]
    assert sorted(set(below)) == [s.name for s in spines] and len(below) == 2 * len(spines)


def test_wiring_uses_every_leaf_port_at_most_once() -> None:
    fabric = size_fat_tree(4096, 64)
    plan = plan_of(dgx(512))
    topology = wire(fabric, plan.nodes, rail_optimized=True)
    ports: dict[str, int] = {}
    for rails in topology.rails.values():
        for leaf in rails:
            ports[leaf] = ports.get(leaf, 0) + 1
    assert len(ports) == fabric.leaves and max(ports.values()) == fabric.leaf_downlinks


def test_slurm_leaf_level_is_the_rail_group() -> None:
    # slurmctld warns when a node sits under several leaves, so a rail group (one SU) is SLURM's leaf
    slurm = plan_of(dgx(64)).slurm
    assert slurm is not None
    leaves = [s for s in slurm.switches if s.nodes]
    assert [(s.name, s.nodes, s.leaves) for s in leaves] == [
        ("su-001", "gpu-[0001-0032]", "leaf-[001-008]"), ("su-002", "gpu-[0033-0064]", "leaf-[009-016]")]
    # the 8 spines reach the same rail groups: SLURM gets them as one switch (tests/test_topology_compact.py)
    spines = [s for s in slurm.switches if s.switches]
    assert [(s.name, s.switches, s.members) for s in spines] == [("spines", "su-[001-002]", "spine-[001-008]")]
    listed = [host for s in leaves for host in expand(s.nodes)]
    assert len(listed) == len(set(listed)) == 64


def test_no_fabric_for_efa_or_cpu_only_pools() -> None:
    assert plan_of(design([{"name": "svc", "hardware": "cpu-1u", "count": 4, "role": "login"}])).fabric is None


@pytest.mark.parametrize(("switch", "radix", "speed", "split"), [
    ("qm9700", 64, 400, False),   # 400G NICs on 400G ports: native
    ("q3400", 288, 400, True),    # 400G NICs on 800G ports: 144 ports split into 288 (hardware-2026, 3.2)
])
def test_400g_nics_split_faster_ports_and_double_the_radix(switch: str, radix: int, speed: int, split: bool) -> None:
    fabric = plan_of(dgx(512, switch=switch)).fabric
    assert fabric is not None
    assert (fabric.radix, fabric.port_speed_gbps, fabric.split) == (radix, speed, split)
    # k²/2: 2,048 endpoints in two tiers at radix 64; 41,472 at 288
    assert fabric.tiers == (3 if radix == 64 else 2)
    assert ("radix doubles for 400G NICs" in fabric.split_note) == split


def test_plan_says_the_ports_are_split(tmp_path: Path, cli: Callable[..., Result]) -> None:
    blueprint = tmp_path / "hall.yaml"
    blueprint.write_text(yaml.safe_dump(dgx(512, switch="q3400")))
    result = cli("plan", blueprint)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "endpoints on radix-288 switches" in out
    assert "ports: 144 × 800G ports split into 288 × 400G: the radix doubles for 400G NICs" in out
