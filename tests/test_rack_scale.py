"""Rack-scale systems (GB200/GB300 NVL72): the physical rules see the rack, everything that runs software sees
its 18 compute trays. One SLURM node per tray with `Gres=gpu:<type>:4`, gres.conf per tray, topology/block with
one block per rack (an NVLink domain), IMEX facts in the inventory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from clusterforge.catalog import Server
from clusterforge.plan import fabric_endpoints
from clusterforge.target_kernel import load_catalog
from tests.plan_builders import load, plan_of
from tests.policies.builders import design


def nvl72(racks: int, hardware: str = "gb200-nvl72", name: str = "gb") -> dict[str, Any]:
    return {"name": name, "hardware": hardware, "count": racks, "partition": "train"}


DGX = {"name": "gpu", "hardware": "dgx-h100", "count": 4, "partition": "train"}


def test_an_nvl72_is_one_rack_of_18_trays_of_4_gpus() -> None:
    catalog = load_catalog()
    for key, model, speed in (("gb200-nvl72", "GB200", 400), ("gb300-nvl72", "GB300", 800)):
        rack = catalog.of(key, Server)
        assert (rack.form, rack.hosts_per_device, rack.gpu_count) == ("rack", 18, 72)
        assert rack.node_gpus is not None and (rack.node_gpus.model, rack.node_gpus.count) == (model, 4)
        assert rack.node_nics is not None and (rack.node_nics.compute, rack.node_nics.speed_gbps) == (4, speed)
        assert rack.node_cpus is not None and rack.node_cpus.threads == 144
        assert rack.gpus is None and rack.nics is None  # per tray only: nothing counted twice


@pytest.mark.parametrize(("change", "message"), [
    ({"form": "chassis"}, "hosts are for rack-scale systems"),
    ({"gpus": {"model": "GB200", "count": 72, "memory_gib": 186}}, "gives gpus per host"),
])
def test_hosts_belong_to_racks_and_carry_the_compute(change: dict, message: str) -> None:
    data = load_catalog().of("gb200-nvl72", Server).model_dump(exclude_unset=True) | change
    if "gpus" in change:
        data["sources"] = data["sources"] | {"gpus": "test"}
    with pytest.raises(ValidationError, match=message):
        Server.model_validate(data)


def test_four_racks_are_72_slurm_nodes_in_four_blocks() -> None:
    plan = plan_of(design([nvl72(4)]))
    (pool,) = plan.nodes
    assert (pool.count, pool.gpu_count, pool.fabric_nics, pool.domain_size) == (72, 4, 4, 18)
    assert plan.slurm is not None and plan.slurm.topology_plugin == "topology/block"
    assert [(b.name, b.nodes) for b in plan.slurm.blocks] == [
        ("gb-nvl01", "gb-[0001-0018]"), ("gb-nvl02", "gb-[0019-0036]"),
        ("gb-nvl03", "gb-[0037-0054]"), ("gb-nvl04", "gb-[0055-0072]")]
    assert plan.slurm.block_sizes == (18, 36, 72)
    assert plan.slurm.switches == ()  # one topology plugin: the blocks replace the tree
    (node,) = plan.slurm.nodes
    assert (node.gres, node.sockets, node.cores_per_socket) == ("gpu:gb200:4", 2, 72)
    loaded = load(design([nvl72(4)]))
    assert fabric_endpoints(loaded.cluster, loaded.catalog) == 4 * 18 * 4


@pytest.mark.parametrize(("racks", "sizes"), [(1, (18,)), (3, (18, 36)), (8, (18, 36, 72, 144))])
def test_block_sizes_double_while_that_many_trays_exist(racks: int, sizes: tuple[int, ...]) -> None:
    plan = plan_of(design([nvl72(racks)]))
    assert plan.slurm is not None and plan.slurm.block_sizes == sizes
    assert len(plan.slurm.blocks) == racks


def test_a_cluster_mixing_racks_and_servers_keeps_the_tree() -> None:
    """SLURM 24.11 takes one topology plugin; the fabric's tree covers every node, blocks would not."""
    plan = plan_of(design([DGX, nvl72(2)]))
    assert plan.slurm is not None and plan.slurm.blocks == ()
    assert plan.slurm.topology_plugin == "topology/tree"
    assert [p.domain_size for p in plan.nodes] == [1, 18]


def test_rendered_files_see_the_trays(cli, write, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("render", write(yaml.safe_dump(design([nvl72(2)]))), "-o", out)
    assert result.exit_code == 0, result.output
    conf = (out / "slurm/slurm.conf").read_text()
    assert "TopologyPlugin=topology/block" in conf
    assert "NodeName=gb-[0001-0036] Sockets=2 CoresPerSocket=72 ThreadsPerCore=1 RealMemory=933888 " \
           "Gres=gpu:gb200:4 State=UNKNOWN" in conf
    assert "NodeName=gb-[0001-0036] Name=gpu Type=gb200 File=/dev/nvidia[0-3]" in (out / "slurm/gres.conf").read_text()
    topology = [line for line in (out / "slurm/topology.conf").read_text().splitlines() if not line.startswith("#")]
    assert topology == ["BlockName=gb-nvl01 Nodes=gb-[0001-0018]", "BlockName=gb-nvl02 Nodes=gb-[0019-0036]",
                        "BlockSizes=18,36"]
    inventory = yaml.load((out / "inventory/hosts.yml").read_text(), Loader=yaml.BaseLoader)
    group = inventory["all"]["children"]["pool_gb"]
    assert group["vars"]["imex_enabled"] == "true"
    domains = {host: facts["nvlink_domain"] for host, facts in group["hosts"].items()}
    assert len(domains) == 36 and domains["gb-0018"] == "gb-nvl01" and domains["gb-0019"] == "gb-nvl02"


def test_gb300_at_full_load_does_not_ride_through_a_feed_loss(cli, write) -> None:
    """GB300 NVL72: up to 142 kW, 26 of 48 × 5.5 kW PSUs; shelves split 4/4 over A/B leave 24: PWR-003. The same
    rack of GB200 (132 kW, 24 needed) rides through."""
    import json

    text = (Path(__file__).parents[1] / "examples/onprem-gb200-nvl72-row.yaml").read_text()
    for hardware, warned in (("gb200-nvl72", False), ("gb300-nvl72", True)):
        path = write(text.replace("hardware: gb200-nvl72", f"hardware: {hardware}"), f"{hardware}.yaml")
        data = json.loads(cli("check", path, "-f", "json").stdout)
        assert ("PWR-003" in {f["id"] for f in data["findings"]}) is warned, data["findings"]


def test_every_tray_stands_in_its_rack() -> None:
    """Trays are numbered through the racks, 18 to a rack, each at its rack system's position."""
    data = yaml.safe_load((Path(__file__).parents[1] / "examples/onprem-gb200-nvl72-row.yaml").read_text())
    (pool, *_) = plan_of(data).nodes
    assert [(run.first, run.count, run.rack) for run in pool.runs] == [
        (1, 18, "l01"), (19, 18, "l02"), (37, 18, "l03"), (55, 18, "l04")]
    assert all(len(run.positions) == 18 and len(set(run.positions)) == 1 for run in pool.runs)
