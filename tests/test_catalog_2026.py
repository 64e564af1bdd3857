"""The catalog's 2026 parts as a design names them: an air-cooled HGX B300 hall, an air-cooled MI350X hall and a
p6e-gb200 UltraServer cluster on AWS, each validated and judged through the CLI; the UltraServer's NVLink domains
and EFA layout; the parts' figures, sources and unconfirmed marks; NICs that servers name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.catalog import Nic, Server, Switch
from clusterforge.target_kernel import load_catalog
from clusterforge.targets.aws.crossguard.launch_template import launch_template_problems
from clusterforge.targets.aws.efa import Interface, efa_layout_problems
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.layout import instance_layout
from tests.policies.builders import evaluate_data

FIXTURES = Path(__file__).parent / "fixtures" / "catalog2026"
CATALOG = load_catalog()
NEW_KEYS = ("hgx-b300-8gpu", "mi350x-8gpu", "u-p6e-gb200x36", "u-p6e-gb200x72", "u-p6e-gb300x72",
            "arista-7060xe7-64ps", "amd-pollara-400", "amd-vulcano-800", "nvidia-connectx-8")


def check(cli: Any, path: Path) -> tuple[int, list[str]]:
    """Exit code and the ids of the error and warning findings."""
    result = cli("check", path, "-f", "json")
    data = json.loads(result.stdout)
    return result.exit_code, sorted(f["id"] for f in data["findings"] if f["level"] in ("error", "warning"))


# ---- the four designs: each validates and gets its verdict ----

@pytest.mark.parametrize(("name", "expected"), [
    ("onprem-hgx-b300-hall", ["COST-003"] * 3),
    ("onprem-mi350x-hall", ["COST-003"] * 3 + ["PWR-003"]),
    ("aws-p6e-gb200-ultraserver", ["COST-003"]),
])
def test_each_2026_design_validates_and_gets_its_verdict(cli: Any, name: str, expected: list[str]) -> None:
    code, ids = check(cli, FIXTURES / f"{name}.yaml")
    assert (code, ids) == (0, expected)


def test_the_b300_hall_runs_on_tomahawk_6_split_to_800g(cli: Any) -> None:
    out = cli("plan", FIXTURES / "onprem-hgx-b300-hall.yaml").stdout
    assert "64 × 1600G ports split into 128 × 800G" in out
    assert "144 endpoints on radix-128 switches" in out


def test_an_ultraserver_pool_is_nvlink_domains_of_instances(cli: Any, tmp_path: Path) -> None:
    """Two x72 UltraServers: 36 SLURM nodes of 4 GB200, one topology/block block per UltraServer, the stack's
    resources and the power-save programs launch the instance type, never the UltraServer's name."""
    out = tmp_path / "r"
    assert cli("render", FIXTURES / "aws-p6e-gb200-ultraserver.yaml", "-o", out).exit_code == 0
    topology = (out / "slurm" / "topology.conf").read_text()
    assert "BlockName=gb200-nvl01 Nodes=gb200-[0001-0018]" in topology
    assert "BlockName=gb200-nvl02 Nodes=gb200-[0019-0036]" in topology and "BlockSizes=18,36" in topology
    slurm = (out / "slurm" / "slurm.conf").read_text()
    assert "TopologyPlugin=topology/block" in slurm
    assert "NodeName=gb200-[0001-0036] Sockets=2 CoresPerSocket=72 ThreadsPerCore=1" in slurm
    assert "Gres=gpu:gb200:4" in slurm
    resources = yaml.safe_load((out / "pulumi" / "resources.yaml").read_text())
    assert resources["resources"]["pool gb200"]["instance_type"] == "p6e-gb200.36xlarge"
    groups = json.loads((out / "slurm" / "clusterforge-powersave.json").read_text())["groups"]
    assert {g["launch"]["instance_type"] for g in groups if g["name"] == "gb200"} == {"p6e-gb200.36xlarge"}
    assert "imex_enabled: true" in (out / "inventory" / "hosts.yml").read_text()  # each UltraServer one IMEX domain


# ---- the UltraServer's EFA layout (NET-005 and the launch template policy) ----

def test_p6e_gb200_layout_puts_efa_only_at_device_0_on_single_interface_cards() -> None:
    instance = CATALOG.of("u-p6e-gb200x72", Ec2Instance)
    layout = instance_layout(instance, instance.efa_max_interfaces)
    assert [(i.network_card_index, i.device_index, i.interface_type) for i in layout] == [
        (0, 0, "efa"), *((card, 0 if card % 2 else 1, "efa-only") for card in range(1, 17))]
    assert efa_layout_problems("p6e-gb200.36xlarge", instance, layout) == []


def test_device_index_1_on_a_single_interface_card_is_refused() -> None:
    instance = CATALOG.of("u-p6e-gb200x72", Ec2Instance)
    bad = [Interface(0, 0, "efa"), Interface(1, 1, "efa-only")]
    assert efa_layout_problems("p6e-gb200.36xlarge", instance, bad) == [
        "network card 1 of p6e-gb200.36xlarge takes 1 interface(s): device index 1 is refused (use device index 0 "
        "on a card that takes one)"]
    props = {"instanceType": "p6e-gb200.36xlarge", "networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa"},
        {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "efa-only"}]}
    assert launch_template_problems(props, CATALOG) == [  # preview finds the instance type through the UltraServer
        "network card 1 of p6e-gb200.36xlarge takes 1 interface(s): device index 1 is refused (use device index 0 on "
        "a card that takes one)"]


@pytest.mark.parametrize(("asked", "level"), [(18, "error"), (8, "warning")])
def test_net005_judges_an_ultraserver_per_instance(asked: int, level: str) -> None:
    data = yaml.safe_load((FIXTURES / "aws-p6e-gb200-ultraserver.yaml").read_text())
    data["pools"][0]["efa_interfaces"] = asked
    [finding] = [f for f in evaluate_data(data).findings if f.id == "NET-005"]
    assert finding.level == level and "17" in finding.message


def test_an_ultraserver_counts_its_instances_and_gpus() -> None:
    x72, x36 = CATALOG.of("u-p6e-gb200x72", Ec2Instance), CATALOG.of("u-p6e-gb200x36", Ec2Instance)
    assert (x72.hosts_per_device, x72.gpu_count, x72.launched_as("u-p6e-gb200x72")) == (18, 72, "p6e-gb200.36xlarge")
    assert (x36.hosts_per_device, x36.gpu_count) == (9, 36)
    assert x72.architecture == "arm64" and x72.network_cards == 17


# ---- the parts: figures, sources, unconfirmed marks ----

@pytest.mark.parametrize("key", NEW_KEYS)
def test_every_new_part_is_shown_with_its_sources(cli: Any, key: str) -> None:
    result = cli("catalog", "show", key, "-f", "json")
    assert result.exit_code == 0
    shown = json.loads(result.stdout)
    assert shown["sources"] and all(shown["sources"].values())


@pytest.mark.parametrize(("key", "confirmed"), [
    ("u-p6e-gb300x72", {"architecture"}),  # AWS publishes the GB300 UltraServer's arm64 AMI, no figure of it
    ("amd-vulcano-800", set()),
    ("arista-7060xe7-64ps", {"protocol"}),
])
def test_parts_without_a_primary_source_are_marked_unconfirmed(key: str, confirmed: set[str]) -> None:
    sources = CATALOG.get(key).sources
    assert {name for name, text in sources.items() if "[U]" not in text} == confirmed


def test_b300_and_mi350x_servers_are_air_cooled_8_gpu_systems() -> None:
    b300, mi350x = CATALOG.of("hgx-b300-8gpu", Server), CATALOG.of("mi350x-8gpu", Server)
    assert b300.gpus is not None and mi350x.gpus is not None
    assert (b300.cooling, b300.gpus.model, b300.gpus.count, b300.max_power_kw) == ("air", "B300", 8, 14.5)
    assert b300.psus.redundancy == "5+5" and b300.nics is not None and b300.nics.speed_gbps == 800
    assert (mi350x.cooling, mi350x.gpus.model, mi350x.gpus.vendor) == ("air", "MI350X", "amd")
    assert mi350x.max_power_kw == 13.5
    assert mi350x.nics is not None and mi350x.nics.model == "amd-pollara-400"


def test_tomahawk_6_and_the_nics() -> None:
    th6 = CATALOG.of("arista-7060xe7-64ps", Switch)
    assert (th6.ports * th6.port_speed_gbps, th6.split_ports, th6.split_speed_gbps) == (102_400, 128, 800)
    pollara, vulcano = CATALOG.of("amd-pollara-400", Nic), CATALOG.of("amd-vulcano-800", Nic)
    assert (pollara.port_speed_gbps, pollara.protocols) == (400, ("ethernet",))
    assert (vulcano.port_speed_gbps, vulcano.protocols) == (800, ("ethernet",))


def site_server(nics: str) -> str:
    return f"""apiVersion: clusterforge/v1
kind: Catalog
hardware:
  mi350x-site:
    kind: server
    description: a site's MI350X server
    gpus: {{model: MI350X, count: 8, memory_gib: 288, vendor: amd}}
    max_power_kw: 13.5
    psus: {{count: 6, watts: 3000}}
    u_height: 8
    weight_kg: 120
    depth_mm: 1009
    max_inlet_c: 35
    nics: {nics}
    sources: {{gpus: s, max_power_kw: s, psus: s, u_height: s, weight_kg: s, depth_mm: s, max_inlet_c: s, nics: s}}
"""


@pytest.mark.parametrize(("nics", "said"), [
    ("{compute: 8, speed_gbps: 800, protocols: [ethernet], model: amd-pollara-400}",
     "hardware.mi350x-site.nics.model: 800G NICs cannot be amd-pollara-400, whose ports run at 400G"),
    ("{compute: 8, speed_gbps: 400, protocols: [infiniband], model: amd-pollara-400}",
     "hardware.mi350x-site.nics.model: amd-pollara-400 does not speak infiniband"),
    ("{compute: 8, speed_gbps: 400, model: amd-pollara-900}",
     "hardware.mi350x-site.nics.model: nics.model 'amd-pollara-900' is not a nic of the catalog"),
])
def test_a_site_server_naming_a_nic_must_match_it(cli: Any, tmp_path: Path, nics: str, said: str) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(site_server(nics))
    result = cli("catalog", "show", "mi350x-site", "--catalog", site)
    assert result.exit_code == 2
    assert said in result.output


def test_a_site_server_may_name_a_catalog_nic(cli: Any, tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(site_server("{compute: 8, speed_gbps: 400, protocols: [ethernet], model: amd-vulcano-800}"))
    assert cli("catalog", "show", "mi350x-site", "--catalog", site).exit_code == 0
