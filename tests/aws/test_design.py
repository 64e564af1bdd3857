"""The pure design: EFA layouts from the catalog, subnets, capacity, controller, user data (no Pulumi)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clusterforge.blueprint.load import load_blueprint, load_text
from clusterforge.catalog import Instance
from clusterforge.core.errors import ClusterforgeError
from clusterforge.target_kernel import load_catalog
from clusterforge.targets.aws.addressing import RESERVED_ADDRESSES, check_room, plan_subnets
from clusterforge.targets.aws.design import data_repository, design
from clusterforge.targets.aws.efa import Interface
from clusterforge.targets.aws.layout import efa_layout, pool_layout
from clusterforge.targets.aws.settings import StackSettings
from clusterforge.targets.aws.userdata import NodeIdentity, cloud_config
from tests.aws.blueprints import example, lowered_p5, p4d, p6_b300, write

CATALOG = load_catalog()


def settings(path: Path) -> StackSettings:
    return StackSettings(blueprint=path)


@pytest.mark.parametrize(("instance_type", "cards"), [
    ("p5.48xlarge", 32), ("p5en.48xlarge", 16), ("p6-b200.48xlarge", 8), ("p4d.24xlarge", 4)])
def test_full_layout_is_the_catalog_card_count(instance_type: str, cards: int) -> None:
    instance = CATALOG.of(instance_type, Instance)
    layout = pool_layout("gpu", instance_type, instance, instance.efa_max_interfaces)
    assert instance.efa_max_interfaces == cards  # the catalog is the source; the figure here only labels the case
    assert [i.network_card_index for i in layout] == list(range(cards))
    assert layout[0] == Interface(0, 0, "efa")
    assert all(i == Interface(i.network_card_index, 1, "efa-only") for i in layout[1:])


def test_no_efa_is_one_standard_interface() -> None:
    assert efa_layout(0) == (Interface(0, 0, "interface"),)
    assert efa_layout(0, primary_card_efa=False) == (Interface(0, 0, "interface"),)


def test_p6_b300_keeps_card_0_for_the_primary_ena_interface() -> None:
    """Card 0 is ENA only: the primary `interface` alone there, `efa-only` at device 0 on cards 1-16 (AWS's
    layout for p6-b300, aws-parallelcluster issue 7143), 17 interfaces for 16 EFA."""
    instance = CATALOG.of("p6-b300.48xlarge", Instance)
    layout = pool_layout("gpu", "p6-b300.48xlarge", instance, instance.efa_max_interfaces)
    assert layout == (Interface(0, 0, "interface"), *(Interface(card, 0, "efa-only") for card in range(1, 17)))
    assert pool_layout("gpu", "p6-b300.48xlarge", instance, 4) == (
        Interface(0, 0, "interface"), *(Interface(card, 0, "efa-only") for card in range(1, 5)))
    with pytest.raises(ClusterforgeError, match=r"17 EFA interfaces exceed p6-b300\.48xlarge's maximum of 16"):
        pool_layout("gpu", "p6-b300.48xlarge", instance, 17)


def test_design_of_p6_b300(tmp_path: Path) -> None:
    gpu = design(load_blueprint(write(tmp_path, p6_b300())), settings(tmp_path)).pools[1]
    assert gpu.instance_type == "p6-b300.48xlarge" and gpu.efa and gpu.placement_group == "research-b300-gpu"
    assert [(i.network_card_index, i.interface_type) for i in gpu.interfaces] == [
        (0, "interface"), *((card, "efa-only") for card in range(1, 17))]


def test_a_layout_beyond_the_cards_is_refused() -> None:
    instance = CATALOG.of("p4d.24xlarge", Instance)
    with pytest.raises(ClusterforgeError, match=r"exceed p4d\.24xlarge's maximum of 4"):
        pool_layout("gpu", "p4d.24xlarge", instance, 5)


def test_design_of_p5(tmp_path: Path) -> None:
    plan = design(load_blueprint(write(tmp_path, example("aws-p5"))), settings(tmp_path))
    controller, gpu = plan.pools
    assert (controller.role, gpu.role) == ("controller", "compute")  # the controller comes first
    assert plan.implicit_controller and plan.controller == "controller-0001"
    assert controller.instance_type == StackSettings.controller_instance_type
    assert controller.placement_group is None and not controller.efa
    assert controller.capacity.kind == "on-demand"
    assert gpu.nodes[0] == "gpu-0001" and gpu.nodes[-1] == "gpu-0064" and len(gpu.nodes) == 64
    assert len(gpu.interfaces) == CATALOG.of("p5.48xlarge", Instance).efa_max_interfaces
    assert gpu.placement_group == "nlp-p5-gpu"
    assert (gpu.capacity.kind, gpu.capacity.reservation_id) == ("capacity-block", "cr-0123456789abcdef0")
    assert gpu.root_volume_gib == CATALOG.of("p5.48xlarge", Instance).root_volume_gib
    assert plan.addressing.private == {"use1-az4": "10.0.0.0/17"}


def test_an_explicit_controller_pool_is_kept(tmp_path: Path) -> None:
    plan = design(load_blueprint(write(tmp_path, example("aws-p5en"))), settings(tmp_path))
    assert not plan.implicit_controller and plan.controller == "head-0001"
    assert [p.name for p in plan.pools] == ["head", "gpu"]


def test_lowered_interfaces_and_root_volume_from_the_pool(tmp_path: Path) -> None:
    data = lowered_p5(8)
    data["pools"][0]["root_volume_gib"] = 512
    gpu = design(load_blueprint(write(tmp_path, data)), settings(tmp_path)).pools[1]
    assert [i.network_card_index for i in gpu.interfaces] == list(range(8))
    assert gpu.root_volume_gib == 512


def test_p4d_is_on_demand(tmp_path: Path) -> None:
    gpu = design(load_blueprint(write(tmp_path, p4d())), settings(tmp_path)).pools[1]
    assert gpu.capacity.kind == "on-demand" and gpu.capacity.reservation_id is None


def test_onprem_blueprints_are_refused(tmp_path: Path) -> None:
    loaded = load_blueprint(Path(__file__).resolve().parents[2] / "examples" / "onprem-dgx-h100.yaml")
    with pytest.raises(ClusterforgeError, match="target: aws"):
        design(loaded, settings(tmp_path))


def test_subnets_are_carved_deterministically() -> None:
    one = plan_subnets("10.0.0.0/16", ["use1-az4"])
    assert one.private == {"use1-az4": "10.0.0.0/17"} and one.public == "10.0.128.0/24"
    three = plan_subnets("10.0.0.0/16", ["a1-az1", "a1-az2", "a1-az3"])
    assert three.private == {"a1-az1": "10.0.0.0/19", "a1-az2": "10.0.32.0/19", "a1-az3": "10.0.64.0/19"}
    with pytest.raises(ClusterforgeError, match="too small"):
        plan_subnets("10.0.0.0/27", ["a1-az1"])


def test_a_subnet_too_small_for_the_nodes_is_refused() -> None:
    check_room("10.0.0.0/24", 256 - RESERVED_ADDRESSES, "az")
    with pytest.raises(ClusterforgeError, match="do not fit subnet"):
        check_room("10.0.0.0/24", 256 - RESERVED_ADDRESSES + 1, "az")


@pytest.mark.parametrize(("location", "url"), [
    ("datasets", "s3://datasets/"), ("s3://datasets/imagenet", "s3://datasets/imagenet/"),
    ("s3://datasets/a/b/", "s3://datasets/a/b/")])
def test_data_repository_locations(location: str, url: str) -> None:
    data = example("aws-p5")
    data["aws"]["data_bucket"] = location
    loaded = load_text(yaml.safe_dump(data))
    assert loaded.cluster.aws is not None
    repository = data_repository(loaded.cluster, loaded.cluster.aws)
    assert repository is not None and repository.url == url


def test_user_data_names_the_node_and_the_controller() -> None:
    text = cloud_config(NodeIdentity("nlp-p5", "gpu-0007", "gpu", "compute", "controller-0001", "10.0.0.12"))
    assert text.startswith("#cloud-config\n")
    document = yaml.safe_load(text)
    assert document["hostname"] == "gpu-0007" and document["preserve_hostname"] is False
    env = document["write_files"][0]["content"]
    assert "SLURM_CONTROLLER=controller-0001\n" in env and "SLURM_CONTROLLER_ADDR=10.0.0.12\n" in env
    assert "10.0.0.12 controller-0001" in document["bootcmd"][0][2]
    own = yaml.safe_load(cloud_config(NodeIdentity("c", "controller-0001", "controller", "controller",
                                                   "controller-0001", None)))
    assert "bootcmd" not in own and "SLURM_CONTROLLER_ADDR" not in own["write_files"][0]["content"]
