"""The site's address plan (plan/addresses.py), its gate (NET-009), what render writes from it (provisioning/) and
the MACs read from each server's BMC that bind a node to its address (`power inventory`, `render --macs`)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterforge.model.networks import SiteNetwork, SiteNetworks
from clusterforge.plan.addresses import address_plan, block_size
from tests.conftest import line_of

NETWORKS = {"provisioning": {"cidr": "10.1.0.0/22", "gateway": "10.1.0.1"},
            "management": {"cidr": "10.2.0.0/22", "gateway": "10.2.0.1"}}


def with_networks(data: dict, networks: dict | None = None, **gpu: object) -> dict:
    out = copy.deepcopy(data)
    out["site"]["networks"] = networks or NETWORKS
    out["pools"][0].update(gpu)
    return out


def plan(pools: list[tuple[str, int]], reserved: int = 16):
    networks = SiteNetworks(provisioning=SiteNetwork(cidr="10.1.0.0/16", reserved=reserved),
                            management=SiteNetwork(cidr="10.2.0.0/16", reserved=reserved))
    return address_plan(networks, pools)


def test_a_pool_takes_the_next_power_of_two_after_the_reserved_addresses() -> None:
    assert [block_size(n) for n in (1, 16, 17, 100, 12_500)] == [16, 16, 32, 128, 16_384]
    first = plan([("gpu", 16), ("cpu", 40)])
    assert str(first.provisioning.address("gpu", 1)) == "10.1.0.17"  # after 16 reserved
    assert str(first.provisioning.address("cpu", 1)) == "10.1.0.33"  # gpu's block is 16
    assert str(first.management.address("cpu", 40)) == "10.2.0.72"  # the same host part, on the BMCs' network
    assert first.provisioning.needed == 16 + 16 + 64


def test_a_node_keeps_its_address_when_a_pool_grows_within_its_block_or_one_is_added() -> None:
    before = plan([("gpu", 16), ("cpu", 40)])
    grown = plan([("gpu", 16), ("cpu", 60), ("login", 2)])  # cpu grows within its 64; a pool added at the end
    for pool, count in (("gpu", 16), ("cpu", 40)):
        for number in range(1, count + 1):
            assert grown.provisioning.address(pool, number) == before.provisioning.address(pool, number)
            assert grown.management.address(pool, number) == before.management.address(pool, number)
    moved = plan([("gpu", 17), ("cpu", 40)])  # past its block: the next pool moves, which max_count prevents
    assert moved.provisioning.address("cpu", 1) != before.provisioning.address("cpu", 1)


def test_the_gate_finds_a_small_network_an_overlap_and_a_gateway_among_the_nodes(onprem_data, write, cli) -> None:
    networks = {"provisioning": {"cidr": "10.1.0.0/27", "gateway": "10.1.0.1"},
                "management": {"cidr": "10.1.0.0/24", "gateway": "10.1.0.40"}}
    path = write(yaml.safe_dump(with_networks(onprem_data, networks), sort_keys=False))
    result = cli("check", path, "-f", "json")
    found = [f for f in yaml.safe_load(result.output)["findings"] if f["id"] == "NET-009"]
    said = {(f["path"], f["message"].split(" ")[1]) for f in found}
    assert ("site.networks.provisioning.cidr", "provisioning") in said, found
    assert {f["path"] for f in found} == {"site.networks.provisioning.cidr", "site.networks.management.cidr",
                                          "site.networks.management.gateway"}, found
    small = next(f for f in found if f["path"] == "site.networks.provisioning.cidr")
    assert "has 30 host addresses" in small["message"] and "need 32" in small["message"]
    assert small["line"] == line_of(path, "cidr: 10.1.0.0/27")
    assert result.exit_code == 1
    fine = write(yaml.safe_dump(with_networks(onprem_data), sort_keys=False), "fine.yaml")
    assert not [f for f in yaml.safe_load(cli("check", fine, "-f", "json").output)["findings"]
                if f["id"] == "NET-009"]


@pytest.mark.parametrize(("cidr", "said"), [("10.1.0.1/24", "host bits set"), ("10.0.0.0/7", "/8 to /30"),
                                            ("fd00::/64", "is not an IPv4 CIDR block")])
def test_a_network_that_is_not_one_is_exit_2_at_its_line(onprem_data, write, cli, cidr: str, said: str) -> None:
    path = write(yaml.safe_dump(with_networks(onprem_data, {"provisioning": {"cidr": cidr}}), sort_keys=False))
    result = cli("check", path)
    assert result.exit_code == 2 and said in result.output, result.output
    assert f"bp.yaml:{line_of(path, 'cidr:')}: site.networks.provisioning.cidr" in result.output


def render(cli, path: Path, out: Path, *args: str):
    return cli("render", path, "-o", out, *args)


def test_render_writes_hosts_reservations_bmcs_and_warewulf_nodes(onprem_data, write, cli, tmp_path) -> None:
    from clusterforge.bmc import hosts
    from clusterforge.provision import addresses

    path = write(yaml.safe_dump(with_networks(onprem_data, bmc="ipmi"), sort_keys=False))
    macs = tmp_path / "macs.yaml"
    macs.write_text("macs:\n  gpu-0002: ['52:54:00:00:02:01', '52:54:00:00:02:02']\n")
    result = render(cli, path, tmp_path / "out", "--macs", macs)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "out" / "provisioning"
    dhcp = (folder / "dhcp-hosts").read_text().splitlines()
    assert dhcp[1].startswith("# no MAC known for 15 node(s)") and "gpu-[0001,0003-0016]" in dhcp[1]
    assert dhcp[2:] == ["52:54:00:00:02:01,10.1.0.18,gpu-0002"]  # the first MAC, the node's own address
    found = addresses.load(folder / "addresses.txt")  # what `inventory --addresses` reads
    assert found["gpu-0016"].address == "10.1.0.32" and len(found) == 16
    bmcs = hosts.load(folder / "bmcs.yaml")  # what `power --bmcs` reads
    assert (bmcs["gpu-0003"].url, bmcs["gpu-0003"].protocol) == ("ipmi://10.2.0.19", "ipmi")
    nodes = yaml.safe_load((folder / "nodes.conf").read_text())
    assert nodes["nodes"]["gpu-0002"] == {"profiles": ["default", "clusterforge-gpu"],
                                          "network devices": {"default": {"ipaddr": "10.1.0.18",
                                                                          "hwaddr": "52:54:00:00:02:01"}},
                                          "ipmi": {"ipaddr": "10.2.0.18"}}
    assert nodes["nodeprofiles"]["clusterforge-gpu"]["network devices"]["default"] == {
        "netmask": "255.255.252.0", "gateway": "10.1.0.1"}
    assert "10.2.0.17 gpu-0001-bmc" in (folder / "hosts").read_text().splitlines()


def test_a_blueprint_without_networks_renders_no_provisioning_files(onprem_data, write, cli, tmp_path) -> None:
    path = write(yaml.safe_dump(onprem_data, sort_keys=False))
    assert render(cli, path, tmp_path / "out").exit_code == 0
    assert not (tmp_path / "out" / "provisioning").exists()


@pytest.mark.parametrize(("text", "said"), [
    ("macs:\n  gpu-0099: ['52:54:00:00:02:01']\n", "gpu-0099 is not a node of the blueprint"),
    ("macs:\n  gpu-0001: ['52:54:00:00:02:01']\n  gpu-0002: ['52:54:00:00:02:01']\n", "is gpu-0001's too"),
    ("macs:\n  gpu-0001: ['52:54:00:00:02']\n", "macs.gpu-0001[0]"),
    ("macs:\n  gpu-0001: [52:54:00:00:02:01]\n", "macs.gpu-0001[0]"),  # unquoted: YAML 1.1 reads a number
    ("macs: {gpu-0001: []}\n", "macs.gpu-0001"),
])
def test_a_bad_macs_file_is_exit_2_at_its_line(onprem_data, write, cli, tmp_path, text: str, said: str) -> None:
    path = write(yaml.safe_dump(with_networks(onprem_data), sort_keys=False))
    macs = tmp_path / "macs.yaml"
    macs.write_text(text)
    result = render(cli, path, tmp_path / "out", "--macs", macs)
    assert result.exit_code == 2 and said in result.output and "macs.yaml:" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_macs_read_from_the_emulators_servers_land_in_the_reservations(onprem_data, write, cli, tmp_path) -> None:
    """`power inventory` reads each server's EthernetInterfaces through the emulator (sushy-tools), and render
    binds each node's first MAC to its address."""
    from tests.bmc_emulator import PASSWORD, USER, emulator, mac

    path = write(yaml.safe_dump(with_networks(onprem_data, bmc="redfish"), sort_keys=False))
    (tmp_path / "emulator").mkdir()
    with emulator(tmp_path / "emulator", systems=16) as running:
        document = tmp_path / "bmcs.yaml"
        document.write_text(yaml.safe_dump({"defaults": {"verify_tls": False}, "bmcs": {
            node: {"url": running.url, "system": ident} for node, ident in running.ids.items()}}))
        env = {**os.environ, "CLUSTERFORGE_BMC_USERNAME": USER, "CLUSTERFORGE_BMC_PASSWORD": PASSWORD}
        done = subprocess.run([sys.executable, "-m", "clusterforge", "power", "inventory", "gpu-[0001-0016]",
                               "--bmcs", str(document), "-o", str(tmp_path / "macs.yaml")],
                              env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 of 16 nodes listed their network interfaces" in done.stdout
    assert render(cli, path, tmp_path / "out", "--macs", tmp_path / "macs.yaml").exit_code == 0
    assert '  gpu-0001: {url: "https://10.2.0.17", protocol: redfish}' in (
        tmp_path / "out" / "provisioning" / "bmcs.yaml").read_text().splitlines()  # Redfish over TLS
    reservations = (tmp_path / "out" / "provisioning" / "dhcp-hosts").read_text().splitlines()[1:]
    assert reservations == [f"{mac(i, 1)},10.1.0.{16 + i},gpu-{i:04d}" for i in range(1, 17)]


def test_inventory_says_which_protocol_cannot_list_nics(tmp_path, cli, monkeypatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_BMC_USERNAME", "admin")
    monkeypatch.setenv("CLUSTERFORGE_BMC_PASSWORD", "x")
    document = tmp_path / "bmcs.yaml"
    document.write_text("bmcs:\n  gpu-0001: {url: 'ipmi://127.0.0.1:1', protocol: ipmi}\n")
    result = cli("power", "inventory", "gpu-0001", "--bmcs", document, "-o", tmp_path / "macs.yaml")
    assert result.exit_code == 1, result.output
    assert "FAILED           1  gpu-0001  (ipmi does not list a server's network interfaces)" in result.output
    assert (tmp_path / "macs.yaml").read_text().endswith("macs: {}\n")
    kept = document.read_text()
    over = cli("power", "inventory", "gpu-0001", "--bmcs", document, "-o", document)  # -o is the BMC document
    assert over.exit_code == 2 and "bmcs.yaml" in over.output and document.read_text() == kept, over.output
