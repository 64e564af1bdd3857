"""How `clusterforge-resume` grows with the nodes it powers up: 1,000, 5,000 and 12,500 nodes against moto's EC2
in-process (its request interception: boto3 serialises every request and parses every answer, nothing leaves the
process).

`python benchmarks/powersave_resume.py [sizes ...]` prints a Markdown table: per size the seconds the resume took,
the CreateFleet, DescribeInstances, CreateTags and S3 PutObject (a batch's instance -> node map) requests it made,
the instances a batch map names, and the addresses it handed slurmctld. slurmctld is a recorder (what
`scontrol update` would have been told): the figures are the program's and moto's, not SLURM's. moto launches
instantly and enforces no API limits, so the seconds are the program's own work plus moto's; EC2's RunInstances
bucket (FLT-001) is the real bound on a launch day.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.core import hostlist  # noqa: E402
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig  # noqa: E402
from clusterforge.powersave.resume import resume  # noqa: E402
from clusterforge.powersave.slurm import NodeState  # noqa: E402
from clusterforge.targets.aws import powersave as aws  # noqa: E402
from clusterforge.targets.aws.powersave import BATCH_TAG, Ec2Provider, NodeMap  # noqa: E402

REGION = "us-east-1"
BUCKET = "c1-boot-bench"


class Recorder:
    """slurmctld as the resume program sees it: the addresses and states it was told."""

    def __init__(self) -> None:
        self.addresses: dict[str, str] = {}
        self.down: dict[str, str] = {}

    def set_addresses(self, addresses: Mapping[str, str]) -> None:
        self.addresses.update(addresses)

    def mark_down(self, nodes: Sequence[str], reason: str) -> None:
        self.down.update(dict.fromkeys(nodes, reason))

    def power_down(self, nodes: Sequence[str], reason: str) -> None:
        pass

    def power_up(self, nodes: Sequence[str]) -> None:
        pass

    def nodes(self) -> dict[str, NodeState]:
        return {}


def counter(client: Any, operation: str, service: str = "ec2") -> list[int]:
    seen: list[int] = []
    client.meta.events.register(f"before-call.{service}.{operation}", lambda **_: seen.append(1))
    return seen


def run(size: int) -> dict[str, Any]:
    """One fresh moto EC2, one launch template, one resume of `size` nodes."""
    import moto

    with moto.mock_aws():
        client = aws.client(REGION)
        vpc = client.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        subnet = client.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/17")["Subnet"]["SubnetId"]
        image = client.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        client.create_launch_template(LaunchTemplateName="c1-gpu", LaunchTemplateData={
            "ImageId": image, "InstanceType": "p5.48xlarge"})
        nodes = hostlist.expand(f"gpu-[00001-{size:05d}]")
        group = NodeGroup(name="gpu", nodes=hostlist.compress(nodes), launch={
            "launch_template": "c1-gpu", "instance_type": "p5.48xlarge", "subnet": subnet})
        config = PowerSaveConfig(cluster="c1", provider="aws", region=REGION, groups=(group,))
        s3 = aws.client(REGION, "s3")
        s3.create_bucket(Bucket=BUCKET)
        fleets, describes = counter(client, "CreateFleet"), counter(client, "DescribeInstances")
        tags, maps = counter(client, "CreateTags"), counter(s3, "PutObject", "s3")
        slurm = Recorder()
        start = time.perf_counter()
        done = resume(config, Ec2Provider(config, client, NodeMap(s3, BUCKET)), slurm, nodes, sleep=lambda _: None)
        seconds = time.perf_counter() - start
        calls = len(fleets), len(describes), len(tags), len(maps)
        named: set[str] = set()
        fresh = NodeMap(s3, BUCKET)  # read back as a node and the next program run would
        for page in client.get_paginator("describe_instances").paginate(
                Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]):
            for reservation in page["Reservations"]:
                for raw in reservation["Instances"]:
                    batch = {t["Key"]: t["Value"] for t in raw.get("Tags", [])}.get(BATCH_TAG, "")
                    named.add(fresh.nodes_of(batch).get(raw["InstanceId"], "") if batch else "")
        return {"nodes": size, "seconds": seconds, "fleets": calls[0], "describes": calls[1], "tags": calls[2],
                "maps": calls[3], "named": len(named & set(nodes)), "addresses": len(slurm.addresses),
                "down": len(slurm.down), "failed": len(done.failed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 5000, 12_500])
    sizes = parser.parse_args().sizes
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    rows = [run(size) for size in sizes]
    print("| nodes | resume (s) | s per 1,000 nodes | CreateFleet | DescribeInstances | CreateTags | map PutObject | "
          "named by a map | addresses set | down |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['nodes']:,} | {r['seconds']:.1f} | {r['seconds'] / r['nodes'] * 1000:.2f} | {r['fleets']} | "
              f"{r['describes']} | {r['tags']} | {r['maps']} | {r['named']:,} | {r['addresses']:,} | {r['down']} |")


if __name__ == "__main__":
    main()
