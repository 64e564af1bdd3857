"""The identify script a launched node runs at first boot, run for real by /bin/sh against a metadata service and
an S3 endpoint on loopback (boto3 itself reads the map): it takes its name from its launch batch's map, and a map
or tag that does not give a node name stops the boot."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from clusterforge.targets.aws.userdata import NodeIdentity, cloud_config
from clusterforge.targets.aws.userdata_boot import (
    BOOT_LOG,
    CONFIG_DIR,
    METADATA_ADDRESS,
    VENV,
    BootSource,
    node_inventory,
)
from clusterforge.targets.aws.userdata_identify import NODE_PLACEHOLDER, identify_script

TOKEN = "token-1"
INSTANCE = "i-0123456789abcdef0"
BATCH = "0123456789abcdef"
BUCKET = "c1-boot-x"


class Metadata(http.server.BaseHTTPRequestHandler):
    """IMDSv2: a PUT for a token, then the instance's id and batch tag with it; and, on the same loopback server,
    S3's GetObject (path style, as botocore addresses an IP endpoint) for the batch maps in `objects`."""

    batch: str | None = BATCH
    objects: dict[str, bytes] = {}
    gets: list[str] = []
    unwritten_for: int = 0  # the map's first GETs answer NoSuchKey, as before the resume program has written it

    def do_PUT(self) -> None:
        self._answer(200 if self.path == "/latest/api/token" else 404, TOKEN)

    def do_GET(self) -> None:
        if self.path.startswith(f"/{BUCKET}/"):
            self.gets.append(self.path)
            body = self.objects.get(self.path.removeprefix(f"/{BUCKET}/"))
            if len(self.gets) <= self.unwritten_for:
                body = None
            missing = b"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"
            self._answer(200 if body is not None else 404, body if body is not None else missing)
            return
        known = {"/latest/meta-data/instance-id": INSTANCE,
                 "/latest/meta-data/tags/instance/clusterforge:batch": self.batch}.get(self.path)
        if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
            self._answer(401, "")
        else:
            self._answer(200 if known is not None else 404, known or "")

    def _answer(self, code: int, body: str | bytes) -> None:
        self.send_response(code)
        self.end_headers()
        self.wfile.write(body.encode() if isinstance(body, str) else body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def imds() -> Iterator[tuple[str, type[Metadata]]]:
    handler = type("Handler", (Metadata,), {"objects": {}, "gets": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def run(tmp_path: Path, address: str, wait_s: int = 30) -> subprocess.CompletedProcess[str]:
    """The script with its paths moved under tmp_path and the metadata service on loopback; `hostnamectl` is a
    stub that records the name."""
    etc, bin_dir = tmp_path / "etc", tmp_path / "bin"
    (etc / "inventory").mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(exist_ok=True)
    (etc / "node.env").write_text(f"CLUSTERFORGE_POOL=gpu\nCLUSTERFORGE_REGION=us-east-1\n"
                                  f"CLUSTERFORGE_BOOT_BUCKET={BUCKET}\n")
    (etc / "inventory" / "hosts.template.yml").write_text(node_inventory(NODE_PLACEHOLDER, "gpu", "compute"))
    stub = bin_dir / "hostnamectl"
    stub.write_text(f"#!/bin/sh\necho \"$2\" > {tmp_path}/hostname\n")
    stub.chmod(0o755)
    script = (identify_script(wait_s, poll_s=1).replace(f"http://{METADATA_ADDRESS}", address)
              .replace(CONFIG_DIR, str(etc)).replace(BOOT_LOG, str(tmp_path / "boot.log"))
              .replace(f"{VENV}/bin/python", sys.executable))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "AWS_ENDPOINT_URL": address,
           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    return subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)


def named(handler: type[Metadata], node: str, instance: str = INSTANCE) -> None:
    """The batch's map as the resume program writes it (powersave.NodeMap.publish)."""
    handler.objects[f"node-map/{BATCH}.json"] = json.dumps(
        {"batch": BATCH, "group": "gpu", "nodes": {instance: node, "i-0fedcba9876543210": "gpu-0043"}}).encode()


def test_the_node_takes_its_name_from_its_batchs_map(tmp_path: Path, imds: tuple[str, type[Metadata]]) -> None:
    address, handler = imds
    named(handler, "gpu-0042")
    result = run(tmp_path, address)
    assert result.returncode == 0, (tmp_path / "boot.log").read_text()
    assert (tmp_path / "hostname").read_text() == "gpu-0042\n"
    assert (tmp_path / "etc" / "node.env").read_text().endswith(f"={BUCKET}\nCLUSTERFORGE_NODE=gpu-0042\n")
    assert (tmp_path / "etc" / "inventory" / "hosts.yml").read_text() == node_inventory("gpu-0042", "gpu", "compute")
    assert f"this instance is gpu-0042 (batch {BATCH})" in (tmp_path / "boot.log").read_text()
    assert handler.gets == [f"/{BUCKET}/node-map/{BATCH}.json"]


def test_the_node_waits_for_its_batchs_map(tmp_path: Path, imds: tuple[str, type[Metadata]]) -> None:
    """The map is written right after CreateFleet answers; a node that boots first asks again."""
    address, handler = imds
    named(handler, "gpu-0007")
    handler.unwritten_for = 2
    result = run(tmp_path, address)
    assert result.returncode == 0, (tmp_path / "boot.log").read_text()
    assert (tmp_path / "hostname").read_text() == "gpu-0007\n" and len(handler.gets) == 3


@pytest.mark.parametrize("name", ["gpu-0042\nansible_connection: local", "../../etc/passwd", "a/b", "$(reboot)",
                                  "x" * 64, "-gpu"])
def test_a_name_that_is_not_a_node_name_stops_the_boot(tmp_path: Path, imds: tuple[str, type[Metadata]],
                                                       name: str) -> None:
    address, handler = imds
    named(handler, name)
    assert run(tmp_path, address).returncode == 1
    assert not (tmp_path / "hostname").exists() and not (tmp_path / "etc" / "inventory" / "hosts.yml").exists()
    assert "CLUSTERFORGE_NODE" not in (tmp_path / "etc" / "node.env").read_text()
    assert "is not a node name" in (tmp_path / "boot.log").read_text()


@pytest.mark.parametrize("batch", ["../node-config.tar.gz?x=", "ABC", "0123 45"])
def test_a_batch_tag_that_names_another_object_stops_the_boot(tmp_path: Path, imds: tuple[str, type[Metadata]],
                                                              batch: str) -> None:
    address, handler = imds
    handler.batch = batch
    named(handler, "gpu-0042")
    assert run(tmp_path, address).returncode == 1
    assert not handler.gets and "is not of the expected form" in (tmp_path / "boot.log").read_text()


def test_no_map_within_the_wait_stops_the_boot_with_the_reason(tmp_path: Path,
                                                               imds: tuple[str, type[Metadata]]) -> None:
    address, handler = imds
    named(handler, "gpu-0042", instance="i-0000000000000000a")  # the batch's map, without this instance
    assert run(tmp_path, address, wait_s=2).returncode == 1
    assert f"no node map names instance {INSTANCE} (batch {BATCH}) after 2 s" in (tmp_path / "boot.log").read_text()
    assert not (tmp_path / "hostname").exists()


def test_a_pools_user_data_needs_the_boot_phase() -> None:
    identity = NodeIdentity("c", None, "gpu", "compute", "controller-0001", "10.0.0.4")
    assert "clusterforge-identify" in cloud_config(identity, BootSource("us-east-1", "b", "k", "p"))
    with pytest.raises(ValueError, match="needs the boot phase"):
        cloud_config(identity, None)


def test_the_controller_lets_slurmctlds_programs_reach_the_metadata_service() -> None:
    """They call EC2 with the controller's role as SlurmUser; on every other node only root reaches it."""
    source = BootSource("us-east-1", "b", "k", "p")
    controller = yaml.safe_load(cloud_config(NodeIdentity("c", "controller-0001", "controller", "controller",
                                                          "controller-0001", None), source))
    node = yaml.safe_load(cloud_config(NodeIdentity("c", None, "gpu", "compute", "controller-0001", "10.0.0.4"),
                                       source))
    [guard] = [c[2] for c in controller["bootcmd"] if "169.254.169.254" in c[2]]
    assert "-m owner ! --uid-owner 0 -m owner ! --uid-owner slurm -j REJECT" in guard
    [guard] = [c[2] for c in node["bootcmd"] if "169.254.169.254" in c[2]]
    assert "-m owner ! --uid-owner 0 -j REJECT" in guard and "slurm" not in guard
