"""How long the AWS stack program takes under Pulumi's unit-test mocks, and how its resources grow with the nodes.

`python benchmarks/pulumi_mocks.py [--repeat 3] [--pinned-up-to N] [sizes ...]` prints a Markdown table, one row
per size and image: `baked` (the default: the stack bakes the node image, slurmctld launches the GPU nodes from
the pool's launch template, so the resources do not grow) and `pinned` (`aws.ami` pinned: one `ec2.Instance` per
node, configured by a push), the latter up to `--pinned-up-to` nodes. Phases:
- check: load the blueprint and run every policy rule (what refuses a bad design);
- design: planner, node names, EFA layouts, subnets (pure Python, no Pulumi);
- build: constructing the components and resources (the program's own code, synchronously);
- drained: until every registration reached the mock engine (the Pulumi runtime's share included).
Each phase is the median of the repeats; the blueprint is examples/aws-p5.yaml with the GPU count changed, on demand
(a Capacity Block holds at most 64) in a /14 VPC (room for 12,500 addresses in one zone).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime.settings as pulumi_settings
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.targets.aws.design import design  # noqa: E402
from clusterforge.targets.aws.guard import check  # noqa: E402
from clusterforge.targets.aws.program import build  # noqa: E402
from clusterforge.targets.aws.settings import PROJECT, StackSettings  # noqa: E402


class Mocks(pulumi.runtime.Mocks):
    """Counts registrations and returns what the program reads back (addresses, names, versions)."""

    def __init__(self) -> None:
        self.count = 0

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.count += 1
        state = dict(args.inputs) | {"privateIp": f"10.0.{self.count // 250}.{self.count % 250 + 4}",
                                     "latestVersion": 1, "bucket": "bench-bucket", "name": args.name,
                                     "arn": f"arn:aws:mock:::{args.name}", "dnsName": "fs.example",
                                     "mountName": "abc",
                                     "outputResources": [{"amis": [{"image": "ami-0bake0000000000b"}]}]}
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {"value": "ami-0123456789abcdef0", "rootDeviceName": "/dev/sda1"}


PINNED_AMI = "ami-0123456789abcdef0"


def blueprint(nodes: int, directory: Path, pinned: bool = False) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "aws-p5.yaml").read_text())
    data["pools"][0]["count"] = nodes
    data["aws"] |= {"capacity": {"type": "on-demand"}, "vpc_cidr": "10.0.0.0/14"}
    if pinned:
        data["aws"]["ami"] = PINNED_AMI
    path = directory / f"p5-{nodes}{'-pinned' if pinned else ''}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def once(path: Path) -> dict[str, float]:
    settings = StackSettings(blueprint=path)
    checked, t_check = timed(lambda: check(settings))
    _, t_design = timed(lambda: design(checked.loaded, settings))
    mocks = Mocks()
    pulumi_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack="bench", preview=False)
    phases: dict[str, float] = {}

    def program() -> Any:
        built, phases["build"] = timed(lambda: build(checked.loaded, settings))
        return pulumi.Output.from_input(built.outputs)

    _, drained = timed(lambda: pulumi.runtime.test(program)())
    return {"check": t_check, "design": t_design, "build": phases["build"], "drained": drained,
            "resources": float(mocks.count)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[16, 1024, 12500])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pinned-up-to", type=int, default=1024,
                        help="also run the pinned-AMI program (one instance per node) up to this many nodes")
    args = parser.parse_args()
    print("| GPU nodes | image | resources | check s | design s | build s | drained s | drained ms/resource |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in args.sizes:
            for pinned in (False, True):
                if pinned and nodes > args.pinned_up_to:
                    continue
                path = blueprint(nodes, Path(tmp), pinned)
                runs = [once(path) for _ in range(args.repeat)]
                med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                print(f"| {nodes:,} | {'pinned' if pinned else 'baked'} | {int(med['resources']):,} | "
                      f"{med['check']:.3f} | {med['design']:.3f} | {med['build']:.2f} | {med['drained']:.2f} | "
                      f"{1000 * med['drained'] / med['resources']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
