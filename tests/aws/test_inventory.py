"""Stack outputs to Ansible inventory: standalone, overlaid on the planner's inventory, and the CLI."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from clusterforge.core.errors import ClusterforgeError
from clusterforge.render import yamlout
from clusterforge.targets.aws.inventory import inventory, overlay, parse_outputs


def outputs(**changes: Any) -> dict[str, Any]:
    """What `pulumi stack output --json` prints for a small cluster (controller added by the stack)."""
    nodes = [{"name": "controller-0001", "pool": "controller", "role": "controller", "instance_type": "m7i.4xlarge",
              "instance_id": "i-0000000000000000a", "private_ip": "10.0.0.10"}]
    nodes += [{"name": f"gpu-000{n}", "pool": "gpu", "role": "compute", "instance_type": "p5.48xlarge",
               "instance_id": f"i-000000000000000{n}", "private_ip": f"10.0.0.{20 + n}"} for n in (1, 2)]
    data: dict[str, Any] = {
        "outputs_version": 1, "cluster": "nlp-p5", "region": "us-east-1", "availability_zones": ["use1-az4"],
        "ami": "ami-0123456789abcdef0", "nodes": nodes, "controller": {"name": "controller-0001",
                                                                          "private_ip": "10.0.0.10"},
        "checkpoint_bucket": "nlp-p5-ckpt-1",
        "lustre": {"file_system_id": "fs-1", "dns_name": "fs-1.fsx.us-east-1.amazonaws.com", "mount_name": "abc",
                   "mount": "/fsx", "data_path": None, "checkpoint_path": "/checkpoints"}}
    return data | changes


def test_standalone_inventory() -> None:
    inv = inventory(parse_outputs(json.dumps(outputs())))["all"]
    assert inv["vars"]["slurm_controller_host"] == "controller-0001"
    assert inv["vars"]["lustre_client_fsx_dns_name"] == "fs-1.fsx.us-east-1.amazonaws.com"
    assert inv["vars"]["lustre_client_fsx_mount_name"] == "abc" and inv["vars"]["lustre_client_mount"] == "/fsx"
    groups = inv["children"]
    assert list(groups["slurm_controller"]["hosts"]) == ["controller-0001"]
    assert groups["slurm_compute"] == {"children": {"pool_gpu": {}}}
    assert groups["pool_gpu"]["hosts"]["gpu-0002"] == {
        "ansible_host": "10.0.0.22", "aws_instance_id": "i-0000000000000002", "aws_instance_type": "p5.48xlarge"}
    assert groups["pool_controller"]["hosts"]["controller-0001"]["ansible_host"] == "10.0.0.10"


def test_ssm_connection() -> None:
    inv = inventory(parse_outputs(json.dumps(outputs())), "ssm")["all"]
    assert inv["vars"]["ansible_connection"] == "community.aws.aws_ssm"
    assert inv["vars"]["ansible_aws_ssm_bucket_name"] == "nlp-p5-ckpt-1"
    host = inv["children"]["pool_gpu"]["hosts"]["gpu-0001"]
    assert host["ansible_aws_ssm_instance_id"] == "i-0000000000000001"


def rendered() -> dict[str, Any]:
    """The planner's inventory for the same blueprint: no controller pool, so it borrowed gpu-0001."""
    return {"all": {"children": {
        "slurm_controller": {"hosts": {"gpu-0001": {}}},
        "slurm_compute": {"children": {"pool_gpu": {}}},
        "pool_gpu": {"vars": {"gpu_count": 8, "gres": "gpu:h100:8"},
                     "hosts": {"gpu-0001": {}, "gpu-0002": {"note": "kept"}}}}}}


def test_overlay_adds_addresses_and_the_stacks_controller() -> None:
    inv = overlay(rendered(), parse_outputs(json.dumps(outputs())))["all"]
    groups = inv["children"]
    assert groups["pool_gpu"]["vars"]["gres"] == "gpu:h100:8"  # the plan's facts stay
    assert groups["pool_gpu"]["hosts"]["gpu-0002"] == {"note": "kept", "ansible_host": "10.0.0.22",
                                                       "aws_instance_id": "i-0000000000000002",
                                                       "aws_instance_type": "p5.48xlarge"}
    assert list(groups["slurm_controller"]["hosts"]) == ["controller-0001"]
    assert groups["pool_controller"]["hosts"]["controller-0001"]["ansible_host"] == "10.0.0.10"
    assert inv["vars"]["slurm_controller_addr"] == "10.0.0.10"


def test_overlay_refuses_another_clusters_stack() -> None:
    short = outputs()
    short["nodes"] = short["nodes"][:2]
    with pytest.raises(ClusterforgeError, match="gpu-0002 is in the blueprint but not in the stack"):
        overlay(rendered(), parse_outputs(json.dumps(short)))
    extra = copy.deepcopy(outputs())
    extra["nodes"].append({**extra["nodes"][-1], "name": "gpu-0003"})
    with pytest.raises(ClusterforgeError, match="nodes the blueprint does not: gpu-0003"):
        overlay(rendered(), parse_outputs(json.dumps(extra)))


def test_bad_outputs_are_located() -> None:
    data = outputs()
    del data["nodes"][1]["private_ip"]
    with pytest.raises(ClusterforgeError) as error:
        parse_outputs(json.dumps(data, indent=2), "out.json")
    assert "out.json:" in str(error.value) and "private_ip" in str(error.value)
    with pytest.raises(ClusterforgeError, match="newer than this clusterforge reads"):
        parse_outputs(json.dumps(outputs(outputs_version=99)))


@pytest.mark.parametrize(("field", "value", "where"), [
    ("private_ip", "10.0.0.300", "nodes[1].private_ip"),
    ("private_ip", "{{ lookup('pipe', 'id') }}", "nodes[1].private_ip"),
    ("instance_id", "i-123; reboot", "nodes[1].instance_id"),
    ("instance_id", "i-ABCDEF0123", "nodes[1].instance_id"),
    ("name", "gpu-0001\nevil", "nodes[1].name"),
    ("instance_type", "p5 48xlarge", "nodes[1].instance_type"),
    ("role", "root", "nodes[1].role"),
    ("private_ip", "::1%\n  {{ lookup('pipe', 'id') }}", "nodes[1].private_ip"),
    ("private_ip", "fe80::1%eth0", "nodes[1].private_ip"),
    ("private_ip", " 10.0.0.21", "nodes[1].private_ip"),
    ("private_ip", "10.0.0.21\n", "nodes[1].private_ip"),
    ("private_ip", "0:0:0:0:0:0:0:1", "nodes[1].private_ip"),
    ("private_ip", "FE80::1", "nodes[1].private_ip"),
    ("private_ip", "010.0.0.21", "nodes[1].private_ip"),
])
def test_every_output_value_has_its_form(field: str, value: str, where: str) -> None:
    data = outputs()
    data["nodes"][1][field] = value
    with pytest.raises(ClusterforgeError) as error:
        parse_outputs(json.dumps(data, indent=2), "out.json")
    text = str(error.value)
    assert f"{where}:" in text and text.startswith("out.json:") and "\n" not in text


@pytest.mark.parametrize(("path", "value"), [
    (("lustre", "dns_name"), "fs-1.fsx.amazonaws.com x-evil"), (("lustre", "mount"), "/fsx/../etc"),
    (("lustre", "mount_name"), "a:b"), (("region",), "us-east-1\n"), (("checkpoint_bucket",), "{{ x }}"),
    (("cluster",), "Nlp"), (("controller", "private_ip"), "localhost"),
    (("controller", "private_ip"), "::1%25"), (("lustre", "file_system_id"), "fs-1\n")])
def test_cluster_output_values_have_their_form(path: tuple[str, ...], value: str) -> None:
    data = outputs()
    target = data
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    with pytest.raises(ClusterforgeError, match=".".join(path)):
        parse_outputs(json.dumps(data, indent=2), "out.json")


def test_cli_writes_the_inventory(cli: Callable[..., Result], tmp_path: Path) -> None:
    source = tmp_path / "outputs.json"
    source.write_text(json.dumps(outputs()))
    target = tmp_path / "inventory" / "hosts.yml"
    result = cli("inventory", "--from-stack", source, "-o", target)
    assert result.exit_code == 0, result.output
    inv = yamlout.load(target.read_text())
    assert inv["all"]["children"]["pool_gpu"]["hosts"]["gpu-0001"]["ansible_host"] == "10.0.0.21"
    assert target.read_text().startswith("# generated by clusterforge")
    assert "ansible_host: !unsafe" in target.read_text()  # written as render writes it: never evaluated


def test_cli_reports_bad_input_with_exit_2(cli: Callable[..., Result], tmp_path: Path) -> None:
    source = tmp_path / "outputs.json"
    source.write_text('{"cluster": "x"}')
    result = cli("inventory", "--from-stack", source)
    assert result.exit_code == 2 and "outputs.json:1" in result.output


@pytest.mark.parametrize("address", ["10.0.0.21", "2001:db8::21", "fd00::a:1"])
def test_plain_addresses_pass(address: str) -> None:
    data = outputs()
    data["nodes"][1]["private_ip"] = address
    assert parse_outputs(json.dumps(data))


def test_stdin_is_read_within_the_input_limit(tmp_path: Path) -> None:
    """An endless pipe is refused after INPUT_BYTES + 1 bytes, quickly and in bounded memory."""
    import subprocess
    import sys
    import time

    env = {**os.environ, "CLUSTERFORGE_MAX_INPUT_BYTES": "1000000"}
    start = time.monotonic()
    with open("/dev/zero", "rb") as endless:
        result = subprocess.run([sys.executable, "-m", "clusterforge", "inventory", "--from-stack", "-"],
                                stdin=endless, capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "<stdin>" in result.stderr and "over the limit" in result.stderr and "Traceback" not in result.stderr
    assert time.monotonic() - start < 20


def test_stdin_within_the_limit_is_read(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "clusterforge", "inventory", "--from-stack", "-"],
                            input=json.dumps(outputs()), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "ansible_host: !unsafe '10.0.0.21'" in result.stdout or "10.0.0.21" in result.stdout
